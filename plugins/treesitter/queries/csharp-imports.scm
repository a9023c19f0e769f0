(using_directive) @import.csharp
