namespace Acme.Json
{
    class Json {}
}
