// Marks the symbols that libattune.so exports; everything else stays hidden.
#pragma once

#if defined(ATTUNE_BUILDING_LIBRARY)
#define ATTUNE_API __attribute__((visibility("default")))
// For the private state nested in an exported class, which would otherwise
// inherit the class's default visibility.
#define ATTUNE_HIDDEN __attribute__((visibility("hidden")))
#else
#define ATTUNE_API
#define ATTUNE_HIDDEN
#endif
