<?php

namespace Acme\Component\Console;

class Command
{
}
