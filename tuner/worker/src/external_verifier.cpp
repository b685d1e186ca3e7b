#include "cutune/worker/external_verifier.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cutune/model/errors.hpp"

namespace cutune::worker {
namespace {

// Ordered: the observers' values keep the order the verifier gave them in (a row's field order).
using json = nlohmann::ordered_json;

json read_json(int fd, const std::string& path) {
  const auto frame = process::read_frame(fd);
  if (!frame) throw std::runtime_error(fmt::format("verifier at {}: the connection closed", path));
  json j = json::parse(*frame, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::runtime_error(fmt::format("verifier at {}: an answer that is not a JSON object: {:.200}",
                                                           path, *frame));
  return j;
}

void send(int fd, const std::string& path, const process::Frame& frame) {
  if (!process::write_frame(fd, frame))
    throw std::runtime_error(fmt::format("verifier at {}: the connection closed: {}", path, std::strerror(errno)));
}

/// The answer's "observed" object as values; a value that is no number is the verifier's
/// mistake (the package refuses such values before they are sent), named with its key.
ObservedValues observed_of(const json& j, const std::string& path, const std::string& config_key) {
  if (!j.is_object())
    throw std::runtime_error(fmt::format("verifier at {}: \"observed\" for {} is not an object: {:.200}", path,
                                         config_key, j.dump()));
  ObservedValues out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const json& v = it.value();
    if (v.is_number()) out.emplace_back(it.key(), v.get<double>());
    else if (v == "NaN") out.emplace_back(it.key(), std::numeric_limits<double>::quiet_NaN());
    else if (v == "Infinity" || v == "-Infinity")
      out.emplace_back(it.key(), (v == "Infinity" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity());
    else
      throw std::runtime_error(fmt::format("verifier at {}: observed {} of {} is not a number: {:.200}", path,
                                           it.key(), config_key, v.dump()));
  }
  return out;
}

}  // namespace

ExternalVerifier::ExternalVerifier(const std::string& socket_path, const std::vector<std::string>& argument_names)
    : path_(socket_path) {
  // A verifier that goes away must fail the write, not kill the worker.
  ::signal(SIGPIPE, SIG_IGN);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path)
    throw InputError(fmt::format("--verifier {}: not a socket path (1 to {} characters)", socket_path,
                                 sizeof addr.sun_path - 1));
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(fmt::format("--verifier: socket(): {}", std::strerror(errno)));
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw InputError(fmt::format("--verifier {}: nothing listens there ({})", socket_path, std::strerror(e)));
  }
  send(fd_, path_, json{{"hello", 1}, {"arguments", argument_names}}.dump());
  const json answer = read_json(fd_, path_);
  const auto it = answer.find("arguments");
  if (it == answer.end() || !it->is_array())
    throw InputError(fmt::format("--verifier {}: the hello's answer has no \"arguments\" list: {}", path_, answer.dump()));
  for (const json& i : *it) {
    if (!i.is_number_unsigned() || i.get<std::size_t>() >= argument_names.size())
      throw InputError(fmt::format("--verifier {}: argument {} is not one of the problem's {}", path_, i.dump(),
                                   argument_names.size()));
    arguments_.push_back(i.get<std::size_t>());
  }
}

ExternalVerifier::~ExternalVerifier() {
  if (fd_ >= 0) ::close(fd_);
}

ExternalVerifier::Verdict ExternalVerifier::check(const Asked& config, const std::vector<process::Frame>& contents) {
  const std::uint64_t seq = ++seq_;
  json head{{"seq", seq}, {"config", config.key}, {"indices", config.indices}, {"arguments", arguments_}};
  if (config.resources) head["resources"] = to_json(*config.resources);
  send(fd_, path_, head.dump());
  for (const process::Frame& c : contents) send(fd_, path_, c);
  const json answer = read_json(fd_, path_);
  if (answer.value("seq", std::uint64_t{0}) != seq || !answer.contains("ok") || !answer["ok"].is_boolean())
    throw std::runtime_error(fmt::format("verifier at {}: an answer out of turn for {} (seq {}): {:.200}", path_,
                                         config.key, seq, answer.dump()));
  Verdict v;
  v.ok = answer["ok"].get<bool>();
  if (const auto e = answer.find("error"); e != answer.end() && e->is_string()) v.error = e->get<std::string>();
  if (const auto o = answer.find("observed"); o != answer.end()) v.observed = observed_of(*o, path_, config.key);
  return v;
}

}  // namespace cutune::worker
