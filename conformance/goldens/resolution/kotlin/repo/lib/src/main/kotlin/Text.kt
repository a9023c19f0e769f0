package com.acme.text

fun shout(s: String): String = s.uppercase()

class Words(val text: String)
