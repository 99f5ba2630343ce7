// main() for test binaries that link the runner: child-process mode first
// (engine/child/child.h), then GoogleTest.
#include "engine/child/child.h"
#include "gtest/gtest.h"

int main(int argc, char** argv) {
  fleetmark::engine::MaybeRunChild(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
