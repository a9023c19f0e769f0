package com.acme.util;

public class Strings {
    public static String shout(String s) { return s; }
}
