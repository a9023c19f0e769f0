package com.acme.app

import com.acme.text.shout
import com.acme.text.Words as W
import com.acme.model.*
import kotlin.text.Regex

fun main() = println(shout("hi"))
