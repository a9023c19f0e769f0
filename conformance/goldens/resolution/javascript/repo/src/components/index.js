export const Button = () => null;
