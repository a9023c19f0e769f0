require 'test_helper'
require 'acme'
