pub fn parse() {}
