module Acme
  VERSION = '1.0'
end
