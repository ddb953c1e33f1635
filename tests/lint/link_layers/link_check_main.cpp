// The executable of a link check (scripts/cmake/CcbenchLayers.cmake): it only has to link.
int main() { return 0; }
