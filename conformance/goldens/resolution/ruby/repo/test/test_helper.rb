require 'minitest/autorun'
