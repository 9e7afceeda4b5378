// The allowlists of the git configuration guard (policy/git_config_guard.hpp): the keys a
// command may add or change in a repository's configuration and in `.gitmodules`, each with
// the values it accepts and why it runs nothing (git-config(1), gitmodules(5)), as
// docs/security.md lists them; and their one-line form for docs and `pi-sandbox policy`. The
// parser that applies them is git_config_guard.cpp.
#include <string>

#include "policy/git_config_guard.hpp"

namespace pisandbox::policy {

namespace {

using Condition = GitValueCondition;

// The allowlist, grouped as docs/security.md lists it: keys whose value is data git reads
// (names, URLs, refspecs, formats, numbers), never a program, a shell command, a hook or a file
// read as configuration. Each reason says why, with the git-config(1) item (or the manual page
// of the command that writes it). Every other key a command adds or changes is taken out.
const std::vector<GitConfigRule> kRules = {
    // Identity.
    {"user.*", "user", "", "*", Condition::Any,
     "names, e-mail addresses and the signing key's name recorded in commits (user.name, "
     "user.email, user.signingKey): data, the signing program is gpg.program, not allowed"},
    {"author.*", "author", "", "*", Condition::Any,
     "the author's name and e-mail address (author.name, author.email)"},
    {"committer.*", "committer", "", "*", Condition::Any,
     "the committer's name and e-mail address (committer.name, committer.email)"},
    // Remotes and branches (git clone, git remote add, git push -u, git branch --track).
    {"remote.*.url", "remote", "*", "url", Condition::NotCommandTransport,
     "where fetch goes; an ext:: URL runs its address as a command and fd:: uses inherited "
     "descriptors, so those are refused (remote.<name>.url, git-remote-ext(1))"},
    {"remote.*.pushurl", "remote", "*", "pushurl", Condition::NotCommandTransport,
     "where push goes; ext:: and fd:: refused as for url (remote.<name>.pushurl)"},
    {"remote.*.fetch", "remote", "*", "fetch", Condition::Any,
     "a refspec: which refs fetch copies where (remote.<name>.fetch)"},
    {"remote.*.push", "remote", "*", "push", Condition::Any,
     "a refspec: which refs push sends (remote.<name>.push)"},
    {"remote.*.mirror", "remote", "*", "mirror", Condition::Any,
     "a boolean: push behaves as --mirror (remote.<name>.mirror)"},
    {"remote.*.tagOpt", "remote", "*", "tagopt", Condition::Any,
     "--tags or --no-tags for fetch (remote.<name>.tagOpt)"},
    {"remote.*.prune", "remote", "*", "prune", Condition::Any,
     "a boolean: fetch prunes (remote.<name>.prune)"},
    {"remote.*.pruneTags", "remote", "*", "prunetags", Condition::Any,
     "a boolean: fetch prunes tags (remote.<name>.pruneTags)"},
    {"remote.*.skipDefaultUpdate", "remote", "*", "skipdefaultupdate", Condition::Any,
     "a boolean: fetch --all skips it (remote.<name>.skipDefaultUpdate)"},
    {"remote.*.skipFetchAll", "remote", "*", "skipfetchall", Condition::Any,
     "a boolean: fetch --all skips it (remote.<name>.skipFetchAll)"},
    {"remote.*.promisor", "remote", "*", "promisor", Condition::Any,
     "a boolean: missing objects are fetched from it, with its url (remote.<name>.promisor)"},
    {"remote.*.partialclonefilter", "remote", "*", "partialclonefilter", Condition::Any,
     "an object filter such as blob:none (remote.<name>.partialclonefilter)"},
    {"remote.pushDefault", "remote", "", "pushdefault", Condition::Any,
     "the name of the remote push uses (remote.pushDefault)"},
    {"branch.*.remote", "branch", "*", "remote", Condition::Any,
     "the name of the branch's remote (branch.<name>.remote)"},
    {"branch.*.pushRemote", "branch", "*", "pushremote", Condition::Any,
     "the name of the remote the branch is pushed to (branch.<name>.pushRemote)"},
    {"branch.*.merge", "branch", "*", "merge", Condition::Any,
     "the upstream ref of the branch (branch.<name>.merge)"},
    {"branch.*.rebase", "branch", "*", "rebase", Condition::Any,
     "a boolean, merges or interactive: pull rebases (branch.<name>.rebase)"},
    {"branch.*.description", "branch", "*", "description", Condition::Any,
     "text shown by request-pull and format-patch (branch.<name>.description)"},
    // The repository's format, written by git init and git clone.
    {"core.repositoryFormatVersion", "core", "", "repositoryformatversion", Condition::Any,
     "a number: the layout of the repository (core.repositoryFormatVersion)"},
    {"core.fileMode", "core", "", "filemode", Condition::Any,
     "a boolean: whether the executable bit is tracked (core.fileMode)"},
    {"core.bare", "core", "", "bare", Condition::Any,
     "a boolean: the repository has no working tree (core.bare)"},
    {"core.logAllRefUpdates", "core", "", "logallrefupdates", Condition::Any,
     "a boolean or always: reflogs are kept (core.logAllRefUpdates)"},
    {"core.ignoreCase", "core", "", "ignorecase", Condition::Any,
     "a boolean: the file system ignores case (core.ignoreCase)"},
    {"core.precomposeUnicode", "core", "", "precomposeunicode", Condition::Any,
     "a boolean: file names are precomposed (core.precomposeUnicode)"},
    {"core.symlinks", "core", "", "symlinks", Condition::Any,
     "a boolean: symbolic links are checked out as links (core.symlinks)"},
    {"core.autocrlf", "core", "", "autocrlf", Condition::Any,
     "a boolean or input: line ends converted (core.autocrlf)"},
    {"core.eol", "core", "", "eol", Condition::Any,
     "lf, crlf or native: the line end of text files (core.eol)"},
    {"core.safecrlf", "core", "", "safecrlf", Condition::Any,
     "a boolean or warn: irreversible line end conversions refused (core.safecrlf)"},
    {"core.sparseCheckout", "core", "", "sparsecheckout", Condition::Any,
     "a boolean: the sparse-checkout patterns of info/ apply (core.sparseCheckout, "
     "git-sparse-checkout(1))"},
    {"core.sparseCheckoutCone", "core", "", "sparsecheckoutcone", Condition::Any,
     "a boolean: those patterns are directories (core.sparseCheckoutCone)"},
    {"core.quotePath", "core", "", "quotepath", Condition::Any,
     "a boolean: unusual bytes of paths quoted in output (core.quotePath)"},
    {"core.compression", "core", "", "compression", Condition::Any,
     "a number: the zlib level (core.compression)"},
    {"core.looseCompression", "core", "", "loosecompression", Condition::Any,
     "a number: the zlib level of loose objects (core.looseCompression)"},
    {"core.untrackedCache", "core", "", "untrackedcache", Condition::Any,
     "a boolean or keep: the index caches untracked files (core.untrackedCache)"},
    {"core.splitIndex", "core", "", "splitindex", Condition::Any,
     "a boolean: the index is split in two files (core.splitIndex)"},
    {"core.checkStat", "core", "", "checkstat", Condition::Any,
     "default or minimal: which stat fields are compared (core.checkStat)"},
    {"core.trustctime", "core", "", "trustctime", Condition::Any,
     "a boolean: the inode change time is compared (core.trustctime)"},
    {"core.preloadIndex", "core", "", "preloadindex", Condition::Any,
     "a boolean: the index is refreshed in parallel (core.preloadIndex)"},
    {"core.commentChar", "core", "", "commentchar", Condition::Any,
     "the character starting comment lines of messages (core.commentChar)"},
    {"core.abbrev", "core", "", "abbrev", Condition::Any,
     "a number or auto: the length of abbreviated object names (core.abbrev)"},
    {"core.multiPackIndex", "core", "", "multipackindex", Condition::Any,
     "a boolean: the multi-pack-index is used (core.multiPackIndex)"},
    {"core.commitGraph", "core", "", "commitgraph", Condition::Any,
     "a boolean: the commit-graph file is used (core.commitGraph)"},
    {"extensions.objectFormat", "extensions", "", "objectformat", Condition::Any,
     "sha1 or sha256: the hash of the repository (extensions.objectFormat)"},
    {"extensions.refStorage", "extensions", "", "refstorage", Condition::Any,
     "files or reftable: the format of refs (extensions.refStorage)"},
    {"extensions.partialClone", "extensions", "", "partialclone", Condition::Any,
     "the name of the promisor remote, whose url is checked as any url "
     "(gitrepository-layout(5), extensions.partialClone)"},
    // Submodules (git submodule add, git clone --recurse-submodules).
    {"submodule.*.url", "submodule", "*", "url", Condition::NotCommandTransport,
     "where the submodule is cloned from; ext:: and fd:: refused as for remote urls "
     "(submodule.<name>.url)"},
    {"submodule.*.active", "submodule", "*", "active", Condition::Any,
     "a boolean: the submodule is of interest (submodule.<name>.active)"},
    {"submodule.*.branch", "submodule", "*", "branch", Condition::Any,
     "the remote branch followed by update --remote (submodule.<name>.branch)"},
    {"submodule.*.update", "submodule", "*", "update", Condition::NotShellCommand,
     "checkout, rebase, merge or none; `!command` runs a shell command and is refused "
     "(submodule.<name>.update)"},
    {"submodule.*.fetchRecurseSubmodules", "submodule", "*", "fetchrecursesubmodules",
     Condition::Any, "a boolean or on-demand (submodule.<name>.fetchRecurseSubmodules)"},
    {"submodule.*.ignore", "submodule", "*", "ignore", Condition::Any,
     "all, dirty, untracked or none: what status reports (submodule.<name>.ignore)"},
    {"submodule.*.shallow", "submodule", "*", "shallow", Condition::Any,
     "a boolean: the submodule is cloned shallow (submodule.<name>.shallow, gitmodules(5))"},
    {"submodule.active", "submodule", "", "active", Condition::Any,
     "pathspecs of the submodules of interest (submodule.active)"},
    {"submodule.recurse", "submodule", "", "recurse", Condition::Any,
     "a boolean: commands recurse into submodules (submodule.recurse)"},
    // Choices of everyday commands (git config pull.rebase true, ...).
    {"pull.rebase", "pull", "", "rebase", Condition::Any,
     "a boolean, merges or interactive: pull rebases (pull.rebase)"},
    {"pull.ff", "pull", "", "ff", Condition::Any,
     "a boolean or only: pull fast-forwards (pull.ff); not pull.twohead nor pull.octopus, "
     "whose strategy name runs git-merge-<name> found on $PATH"},
    {"push.default", "push", "", "default", Condition::Any,
     "nothing, current, upstream, simple or matching (push.default)"},
    {"push.autoSetupRemote", "push", "", "autosetupremote", Condition::Any,
     "a boolean: push sets the upstream (push.autoSetupRemote)"},
    {"push.followTags", "push", "", "followtags", Condition::Any,
     "a boolean: push sends annotated tags (push.followTags)"},
    {"fetch.prune", "fetch", "", "prune", Condition::Any, "a boolean (fetch.prune)"},
    {"fetch.pruneTags", "fetch", "", "prunetags", Condition::Any, "a boolean (fetch.pruneTags)"},
    {"fetch.recurseSubmodules", "fetch", "", "recursesubmodules", Condition::Any,
     "a boolean or on-demand (fetch.recurseSubmodules)"},
    {"merge.ff", "merge", "", "ff", Condition::Any, "a boolean or only (merge.ff)"},
    {"merge.conflictStyle", "merge", "", "conflictstyle", Condition::Any,
     "merge, diff3 or zdiff3: how conflicts are written (merge.conflictStyle)"},
    {"rebase.autoStash", "rebase", "", "autostash", Condition::Any, "a boolean (rebase.autoStash)"},
    {"rebase.autoSquash", "rebase", "", "autosquash", Condition::Any,
     "a boolean (rebase.autoSquash)"},
    {"rebase.updateRefs", "rebase", "", "updaterefs", Condition::Any,
     "a boolean (rebase.updateRefs)"},
    {"init.defaultBranch", "init", "", "defaultbranch", Condition::Any,
     "the name of the first branch (init.defaultBranch); not init.templateDir, whose hooks "
     "would be copied into new repositories"},
    {"gc.auto", "gc", "", "auto", Condition::Scalar,
     "a number of loose objects (gc.auto); not the other gc.* keys, gc.recentObjectsHook runs "
     "a command"},
    {"index.*", "index", "", "*", Condition::Any,
     "the index file's version and layout (index.version, index.threads, index.sparse, "
     "index.skipHash, index.recordEndOfIndexEntries, index.recordOffsetTable)"},
    {"pack.*", "pack", "", "*", Condition::Scalar,
     "numbers and booleans of pack-objects (pack.window, pack.depth, pack.threads, "
     "pack.compression, pack.packSizeLimit, ...); a value that is neither is refused"},
    {"maintenance.auto", "maintenance", "", "auto", Condition::Boolean,
     "a boolean: commands run maintenance --auto (maintenance.auto, git-maintenance(1); "
     "written by git maintenance register)"},
    {"maintenance.strategy", "maintenance", "", "strategy", Condition::Any,
     "none or incremental: which git tasks are scheduled (maintenance.strategy, written by git "
     "maintenance register)"},
    // Git LFS (git lfs install --local, git lfs track, git lfs push; git-lfs-config(5)).
    {"lfs.repositoryFormatVersion", "lfs", "", "repositoryformatversion", Condition::Any,
     "a number: the layout of .git/lfs (git-lfs-config(5))"},
    {"lfs.url", "lfs", "", "url", Condition::NotCommandTransport,
     "the LFS server's URL (lfs.url, git-lfs-config(5)); not lfs.customtransfer.* nor "
     "lfs.extension.*, which run programs"},
    {"lfs.*.access", "lfs", "*", "access", Condition::Any,
     "basic, negotiate or none: how that URL authenticates (lfs.<url>.access)"},
    {"lfs.*.locksVerify", "lfs", "*", "locksverify", Condition::Any,
     "a boolean: push verifies locks at that URL (lfs.<url>.locksverify)"},
    {"filter.lfs.clean", "filter", "lfs", "clean", Condition::Exactly,
     "exactly what git lfs install writes: git-lfs, found on $PATH as the user's own git finds "
     "it (filter.<driver>.clean)",
     "git-lfs clean -- %f"},
    {"filter.lfs.smudge", "filter", "lfs", "smudge", Condition::Exactly,
     "exactly what git lfs install writes (filter.<driver>.smudge)", "git-lfs smudge -- %f"},
    {"filter.lfs.process", "filter", "lfs", "process", Condition::Exactly,
     "exactly what git lfs install writes (filter.<driver>.process)", "git-lfs filter-process"},
    {"filter.lfs.required", "filter", "lfs", "required", Condition::Boolean,
     "a boolean: a failing filter is an error (filter.<driver>.required)"},
    // Output only.
    {"color.*", "color", "?", "*", Condition::Any,
     "colours of output (color.ui, color.<cmd>.<slot>): attributes, not programs"},
    {"advice.*", "advice", "", "*", Condition::Any, "booleans: which hints are shown (advice.*)"},
};

// The allowlist of `.gitmodules` (gitmodules(5)): git reads from that file only
// `submodule.<name>.*` keys, and of those only the ones below; the value checks are those of the
// configuration's submodule rows. Anything else a command adds there is taken out, though git
// would ignore it: the file is the user's, and what nobody reads has no reason to be added.
const std::vector<GitConfigRule> kGitmodulesRules = {
    {"submodule.*.path", "submodule", "*", "path", Condition::Any,
     "where the submodule is checked out, relative to the working tree (gitmodules(5))"},
    {"submodule.*.url", "submodule", "*", "url", Condition::NotCommandTransport,
     "where the submodule is cloned from; ext:: and fd:: refused (gitmodules(5))"},
    {"submodule.*.branch", "submodule", "*", "branch", Condition::Any,
     "the remote branch followed by update --remote (gitmodules(5))"},
    {"submodule.*.update", "submodule", "*", "update", Condition::NotShellCommand,
     "checkout, rebase, merge or none; `!command` is refused (gitmodules(5); git ignores it "
     "there since 2.20)"},
    {"submodule.*.fetchRecurseSubmodules", "submodule", "*", "fetchrecursesubmodules",
     Condition::Any, "a boolean or on-demand (gitmodules(5))"},
    {"submodule.*.ignore", "submodule", "*", "ignore", Condition::Any,
     "all, dirty, untracked or none: what status reports (gitmodules(5))"},
    {"submodule.*.shallow", "submodule", "*", "shallow", Condition::Any,
     "a boolean: the submodule is cloned shallow (gitmodules(5))"},
};

/// The condition as allowed_git_config_patterns() prints it; empty for Any.
std::string condition_text(const GitConfigRule& rule) {
  switch (rule.condition) {
    case Condition::Any:
      return "";
    case Condition::Boolean:
      return "a boolean";
    case Condition::Scalar:
      return "a boolean or a number";
    case Condition::NotShellCommand:
      return "not starting with !";
    case Condition::NotCommandTransport:
      return "not an ext:: or fd:: URL";
    case Condition::Exactly:
      return "exactly \"" + std::string(rule.exact) + "\"";
  }
  return "";
}

}  // namespace

const std::vector<GitConfigRule>& allowed_git_config_rules() {
  return kRules;
}

const std::vector<GitConfigRule>& allowed_gitmodules_rules() {
  return kGitmodulesRules;
}

const std::vector<std::string_view>& allowed_git_config_patterns() {
  static const std::vector<std::string> lines = [] {
    std::vector<std::string> out;
    for (const auto& rule : kRules) {
      const std::string condition = condition_text(rule);
      out.push_back(std::string(rule.pattern) + (condition.empty() ? "" : " (" + condition + ")"));
    }
    return out;
  }();
  static const std::vector<std::string_view> views(lines.begin(), lines.end());
  return views;
}

}  // namespace pisandbox::policy
