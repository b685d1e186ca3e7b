#pragma once
// The deployment file of tuned winners ("wisdom"): a compact JSON an application
// ships instead of the SQLite DB. Per winner: kernel, problem, GPU identity, configuration
// and provenance. Written by `cutune export --format wisdom`, read by cutune::loader.
//
//   {"format": "cutune-wisdom", "version": 1, "generated_at": "...",
//    "winners": [{"kernel": "reduction", "problem": "n=268435456", "objective": "time",
//                 "gpu": {"model": "NVIDIA H200/sm_90", "name": "NVIDIA H200", "arch": "sm_90",
//                         "sm_count": 132, "memory_bytes": ..., "driver_version": 13000,
//                         "nvrtc_version": 13000},
//                 "config": {"block_size_x": 256, ...},
//                 "provenance": {"run_id": 7, "median_ms": 1.21, "default_ms": 1.93,
//                                "verdict": "separated", "updated_at": "..."}}],
//    "selectors": [...]}
//
// "selectors" (optional; readers before it ignore it): per kernel, GPU model and objective, the
// configurations `cutune distill` kept and the decision tree over the problem variables that
// picks one (model/shape_selector.hpp has the form).
//
// Values read from it are data, not code: the loader checks every configuration against
// the kernel's declared space before compiling it (ARCHITECTURE.md, decision 9).
#include <filesystem>
#include <optional>
#include <vector>

#include "cutune/db/store.hpp"

namespace cutune::db {

struct WisdomEntry {
  Winner winner;                         ///< its finalists are not kept (compactness)
  std::optional<DeviceIdentity> device;  ///< the GPU that measured it, when known
};

/// The store's winners matching `filter`, each with the identity of the GPU of its run
/// (none for imported winners, which have no run).
std::vector<WisdomEntry> wisdom_from_store(const Store& store, const WinnerFilter& filter = {});

/// The document above ("selectors" only when there are some).
nlohmann::ordered_json wisdom_json(const std::vector<WisdomEntry>& entries,
                                   const std::vector<ShapeSelector>& selectors = {});

/// Writes the document atomically (a temporary file renamed into place). Throws
/// InputError naming the path when it cannot be written.
void write_wisdom(const std::filesystem::path& path, const std::vector<WisdomEntry>& entries,
                  const std::vector<ShapeSelector>& selectors = {});

/// A wisdom file's winners and selectors.
struct WisdomFile {
  std::vector<WisdomEntry> winners;
  std::vector<ShapeSelector> selectors;
};
/// Reads a wisdom file as read_wisdom does, with its selectors (errors name
/// "selectors[i].<field>").
WisdomFile read_wisdom_file(const std::filesystem::path& path);

/// Reads a wisdom file. Throws InputError naming the file and the field (e.g.
/// "w.json: winners[2].config: must be an object") for anything malformed. Configurations
/// are returned as stored; checking them against a space is the reader's job.
std::vector<WisdomEntry> read_wisdom(const std::filesystem::path& path);

}  // namespace cutune::db
