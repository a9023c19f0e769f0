require 'acme/version'
require_relative 'acme/util'
require 'json'

module Acme
end
