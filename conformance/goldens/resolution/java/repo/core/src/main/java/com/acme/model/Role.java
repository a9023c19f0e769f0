package com.acme.model;

class Role {}
