"""Pure ProactMem engine: plain data in, plain data out; no Django, no I/O."""
