namespace Acme.Text
{
    public static class Format {}
}
