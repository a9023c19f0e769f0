// a file named like the lodash package
module.exports = {};
