// Catch2 v2 entry point, compiled once and shared by every module's test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
