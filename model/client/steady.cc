// Placeholder: filled in by the change that adds it (registered in CMake ahead of time).
