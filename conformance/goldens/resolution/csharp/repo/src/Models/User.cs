namespace Acme.Models
{
    public class User {}
}
