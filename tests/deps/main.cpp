// The dependency check (cmake/DependencyCheck.cmake): linked with the whole
// of one stage library and only the libraries it declares, so that a call
// into a stage it did not declare fails to link.
int main() { return 0; }
