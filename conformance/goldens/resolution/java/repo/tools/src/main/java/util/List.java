package util;

public class List {}
