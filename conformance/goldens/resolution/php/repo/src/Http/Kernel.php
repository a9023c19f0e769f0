<?php

namespace Acme\Http;

class Kernel
{
}
