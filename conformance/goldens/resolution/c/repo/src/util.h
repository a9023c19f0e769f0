int clamp(int x);
