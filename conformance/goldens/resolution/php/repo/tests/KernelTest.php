<?php

namespace Acme\Tests;

require_once __DIR__ . '/bootstrap.php';

use Acme\Http\Kernel;
use Symfony\Component\Console\Command;

class KernelTest
{
}
