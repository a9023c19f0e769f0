using System;
using System.Text;
using Acme.Models;
using static Acme.Text.Format;

namespace Acme.App
{
    class App {}
}
