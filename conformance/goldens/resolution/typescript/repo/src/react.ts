// a file named like the react package
export const react = 1;
