namespace Acme.Models;

public class Role {}
