// Gives every module library at least one object file, so a module can be built before it has sources.
namespace {
[[maybe_unused]] int module_anchor = 0;
}
