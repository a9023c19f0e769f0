module Acme
  module Util
  end
end
