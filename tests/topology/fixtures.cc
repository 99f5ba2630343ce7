#include "tests/topology/fixtures.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace fleetmark::engine::testing {
namespace {

// The per-process unpack directory, removed when the test program exits.
class UnpackDir {
 public:
  static const UnpackDir& Get() {
    static const UnpackDir dir;
    return dir;
  }
  const std::filesystem::path& path() const { return path_; }
  ~UnpackDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

 private:
  UnpackDir() : path_(std::filesystem::path(FLEETMARK_TOPOLOGY_UNPACK_DIR) / absl::StrCat("run-", getpid())) {}
  std::filesystem::path path_;
};

}  // namespace

std::string FixtureRoot(const std::string& name) {
  static absl::Mutex mu(absl::kConstInit);
  static std::map<std::string, std::string>* roots = new std::map<std::string, std::string>;
  absl::MutexLock lock(&mu);
  if (auto it = roots->find(name); it != roots->end()) return it->second;
  const std::filesystem::path archive = std::filesystem::path(FLEETMARK_TOPOLOGY_FIXTURES_DIR) / (name + ".tar.bz2");
  const std::filesystem::path dir = UnpackDir::Get().path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  EXPECT_FALSE(ec) << "cannot create " << dir << ": " << ec.message();
  // Into <dir>/<name> whatever the archive's top directory is called (hwloc's
  // 32amd64-4s2n4c-cgroup2 holds 32amd64-4s2n4c-cgroup/).
  std::filesystem::create_directories(dir / name, ec);
  const std::string command =
      absl::StrCat("tar -xjf '", archive.string(), "' -C '", (dir / name).string(), "' --strip-components=1");
  const int rc = std::system(command.c_str());
  if (rc != 0 || !std::filesystem::is_directory(dir / name / "sys")) {
    ADD_FAILURE() << "could not unpack " << archive << " (" << command << " -> " << rc << ")";
    return "";
  }
  const std::string root = (dir / name).string();
  (*roots)[name] = root;
  return root;
}

std::string ScratchRoot(const std::string& name) {
  const std::filesystem::path root = UnpackDir::Get().path() / "scratch" / name;
  std::error_code error;
  std::filesystem::remove_all(root, error);
  std::filesystem::create_directories(root, error);
  EXPECT_FALSE(error) << root << ": " << error.message();
  return root.string();
}

std::string CopyFixture(const std::string& name, const std::string& copy) {
  const std::string from = FixtureRoot(name);
  if (from.empty()) return "";
  const std::string to = ScratchRoot(copy);
  std::error_code error;
  std::filesystem::copy(from, to,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks, error);
  if (error) {
    ADD_FAILURE() << "cannot copy " << from << " to " << to << ": " << error.message();
    return "";
  }
  return to;
}

void RemoveTreePath(const std::string& root, const std::string& path) {
  std::error_code error;
  std::filesystem::remove_all(std::filesystem::path(root + path), error);
  EXPECT_FALSE(error) << root << path << ": " << error.message();
}

void WriteTreeFile(const std::string& root, const std::string& path, const std::string& text) {
  const std::filesystem::path file = std::filesystem::path(root + path);
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  ASSERT_FALSE(error) << file << ": " << error.message();
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  ASSERT_TRUE(out) << file << ": cannot write";
}

}  // namespace fleetmark::engine::testing
