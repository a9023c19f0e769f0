package com.acme.model;

public class User {
    public static class Inner {}
}
