package com.acme.patterns

class Regex
