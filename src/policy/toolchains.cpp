#include "policy/toolchains.hpp"

#include <algorithm>
#include <array>

namespace pisandbox::policy {

namespace {

/// A toolchain installed under the home at its default place: a `$PATH` entry inside
/// `marker` needs every directory of `roots` (relative to the home).
struct HomeLayout {
  std::string_view marker;
  std::string_view label;
  std::array<std::string_view, 3> roots;
};

/// Default install places. Order matters: the first marker containing the entry wins.
constexpr std::array<HomeLayout, 16> kLayouts = {{
    {".cargo", "rustup and cargo", {".cargo", ".rustup", ""}},
    {".rustup", "rustup", {".rustup", "", ""}},
    {".pyenv", "pyenv", {".pyenv", "", ""}},
    {".nvm", "nvm", {".nvm", "", ""}},
    {".volta", "volta", {".volta", "", ""}},
    {".asdf", "asdf", {".asdf", ".tool-versions", ""}},
    {".local/share/mise", "mise", {".local/share/mise", ".config/mise", ""}},
    {".sdkman", "SDKMAN!", {".sdkman", "", ""}},
    {"go", "Go (GOPATH)", {"go", "", ""}},
    {"sdk", "Go toolchains (golang.org/dl)", {"sdk", "", ""}},
    {".bun", "bun", {".bun", "", ""}},
    {".deno", "deno", {".deno", "", ""}},
    {".local/share/pnpm", "pnpm", {".local/share/pnpm", "", ""}},
    {".local/bin",
     "~/.local (pip --user, pipx)",
     {".local/bin", ".local/lib", ".local/share/pipx"}},
    {".local/pipx", "pipx", {".local/pipx", "", ""}},
    {".poetry", "poetry", {".poetry", "", ""}},
}};

/// A variable that moves a toolchain's root; the root is needed with `companions` (other
/// variables, or home-relative defaults when they are unset).
struct MovedRoot {
  std::string_view variable;
  std::string_view label;
  std::string_view companion_variable;
  std::string_view companion_default;
};

constexpr std::array<MovedRoot, 13> kMovedRoots = {{
    {"CARGO_HOME", "rustup and cargo", "RUSTUP_HOME", ".rustup"},
    {"RUSTUP_HOME", "rustup", "", ""},
    {"PYENV_ROOT", "pyenv", "", ""},
    {"NVM_DIR", "nvm", "", ""},
    {"VOLTA_HOME", "volta", "", ""},
    {"ASDF_DATA_DIR", "asdf", "", ".tool-versions"},
    {"SDKMAN_DIR", "SDKMAN!", "", ""},
    {"GOPATH", "Go (GOPATH)", "", ""},
    {"MISE_DATA_DIR", "mise", "", ".config/mise"},
    {"BUN_INSTALL", "bun", "", ""},
    {"DENO_INSTALL", "deno", "", ""},
    {"PNPM_HOME", "pnpm", "", ""},
    // An activated virtual environment (PEP 405): its `bin` needs the environment's own
    // `pyvenv.cfg` and `lib`, and the interpreter it was made from (pyvenv.cfg's `home`).
    {"VIRTUAL_ENV", "a Python virtual environment", "PYVENV_HOME", ""},
}};

const fs::path* variable(const std::vector<std::pair<std::string, fs::path>>& env,
                         std::string_view name) {
  for (const auto& [key, value] : env)
    if (key == name && value.is_absolute()) return &value;
  return nullptr;
}

bool holds_credentials(const fs::path& home, const fs::path& root) {
  if (root == home || is_within(home, root)) return true;
  return std::ranges::any_of(credential_stores(), [&](std::string_view store) {
    const fs::path path = home / store;
    return is_within(path, root) || is_within(root, path);
  });
}

}  // namespace

const std::vector<std::string_view>& credential_stores() {
  static const std::vector<std::string_view> stores = {".ssh",
                                                       ".gnupg",
                                                       ".aws",
                                                       ".azure",
                                                       ".config/gcloud",
                                                       ".kube",
                                                       ".docker",
                                                       ".netrc",
                                                       ".git-credentials",
                                                       ".pi",
                                                       ".password-store",
                                                       ".local/share/keyrings",
                                                       ".mozilla",
                                                       ".config/google-chrome",
                                                       ".config/chromium",
                                                       ".npmrc",
                                                       ".pypirc",
                                                       ".config/gh",
                                                       ".claude",
                                                       ".codex"};
  return stores;
}

std::vector<Exposure> toolchain_exposures(
    const fs::path& home, const fs::path& workspace, const std::vector<fs::path>& path_dirs,
    const std::vector<std::pair<std::string, fs::path>>& toolchain_env,
    std::vector<fs::path>& hidden) {
  std::vector<Exposure> out;
  const auto add = [&](const fs::path& root, const std::string& why) {
    const fs::path normal = root.lexically_normal();
    if (std::ranges::any_of(out, [&](const Exposure& e) { return e.path == normal; })) return;
    out.push_back({normal, why, Access::CopyOnWrite, Origin::Toolchain});
  };
  for (const auto& raw : path_dirs) {
    const fs::path dir = raw.lexically_normal();
    if (!dir.is_absolute() || !is_within(dir, home) || is_within(dir, workspace)) continue;
    std::vector<fs::path> roots;
    std::string label = "a $PATH entry";
    for (const auto& moved : kMovedRoots) {
      const fs::path* root = variable(toolchain_env, moved.variable);
      if (root == nullptr || !is_within(dir, root->lexically_normal())) continue;
      roots.push_back(*root);
      label = std::string(moved.label) + " ($" + std::string(moved.variable) + ")";
      if (const fs::path* other = variable(toolchain_env, moved.companion_variable))
        roots.push_back(*other);
      else if (!moved.companion_default.empty())
        roots.push_back(home / moved.companion_default);
      break;
    }
    if (roots.empty()) {
      for (const auto& layout : kLayouts) {
        if (!is_within(dir, home / layout.marker)) continue;
        for (auto root : layout.roots)
          if (!root.empty()) roots.push_back(home / root);
        label = std::string(layout.label);
        break;
      }
    }
    if (roots.empty()) roots.push_back(dir);
    if (dir == home || holds_credentials(home, roots.front().lexically_normal())) {
      if (std::ranges::find(hidden, dir) == hidden.end()) hidden.push_back(dir);
      continue;
    }
    for (const auto& root : roots)
      if (!holds_credentials(home, root.lexically_normal()) && is_within(root, home) &&
          !is_within(root.lexically_normal(), workspace))
        add(root, "$PATH entry " + dir.string() + ": " + label);
  }
  // A root inside another root is covered by it.
  std::vector<Exposure> kept;
  for (const auto& e : out)
    if (std::ranges::none_of(
            out, [&](const Exposure& o) { return o.path != e.path && is_within(e.path, o.path); }))
      kept.push_back(e);
  return kept;
}

std::vector<fs::path> concealed_credentials(
    const fs::path& home, const std::vector<Exposure>& exposed,
    const std::vector<std::pair<std::string, fs::path>>& toolchain_env) {
  std::vector<fs::path> cargo_homes = {home / ".cargo"};
  if (const fs::path* moved = variable(toolchain_env, "CARGO_HOME"))
    cargo_homes.push_back(moved->lexically_normal());
  std::vector<fs::path> out;
  for (const auto& cargo : cargo_homes)
    for (auto name : {"credentials.toml", "credentials"}) {
      const fs::path file = cargo / name;
      const bool visible =
          std::ranges::any_of(exposed, [&](const Exposure& e) { return is_within(file, e.path); });
      if (visible && std::ranges::find(out, file) == out.end()) out.push_back(file);
    }
  return out;
}

}  // namespace pisandbox::policy
