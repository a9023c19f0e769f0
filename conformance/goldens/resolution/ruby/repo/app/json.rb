# not the standard library's json
class AppJson
end
