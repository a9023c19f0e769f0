#pragma once
namespace shapes { struct Circle { double r; }; }
