// The git configuration guard's allowlist (policy/git_config_guard.hpp): git's configuration
// syntax as config.c parses it, every row of the allowlist, every key of git's own that runs or
// reads something (refused), added_not_allowed() and without_findings().
#include "policy/git_config_guard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace pisandbox::policy;

/// A finding as the tests compare it: key, value, implicit, lines, the pattern of the allowlist
/// row whose key matched but not its value ("<none>": no row names the key).
struct Seen {
  std::string key;
  std::string value;
  bool implicit = false;
  std::size_t first_line = 0;
  std::size_t last_line = 0;
  std::string pattern;
  friend bool operator==(const Seen&, const Seen&) = default;
};

void PrintTo(const Seen& s, std::ostream* os) {
  *os << "{" << s.key << " = \"" << s.value << "\"" << (s.implicit ? " implicit" : "") << " lines "
      << s.first_line << "-" << s.last_line << " rule " << s.pattern << "}";
}

std::vector<Seen> seen(const GitConfigScan& scan) {
  std::vector<Seen> out;
  for (const auto& f : scan.findings)
    out.push_back({f.key, f.value, f.implicit, f.first_line, f.last_line,
                   f.rule ? std::string(f.rule->pattern) : "<none>"});
  return out;
}

/// The findings of a well-formed text.
std::vector<Seen> findings(std::string_view text) {
  const auto scan = scan_git_config(text);
  EXPECT_FALSE(scan.malformed) << scan.malformed_reason;
  return seen(scan);
}

/// One-entry text `[header]\n<line>` and the key, value and row pattern its finding must give.
struct Refused {
  std::string_view text;
  std::string_view key;
  std::string_view value;
  std::string_view pattern;
};

// Every key git-config(1) documents as running a program or reading a file (the denylist this
// guard had before its allowlist), keys of git extensions (Git LFS), a key no program knows
// today, and values the allowlist rows refuse.
const std::vector<Refused> kRefused = {
    {"[lfs \"extension.x\"]\nclean = sh -c x", "lfs.extension.x.clean", "sh -c x", "<none>"},
    {"[lfs \"extension.x\"]\nsmudge = sh -c x", "lfs.extension.x.smudge", "sh -c x", "<none>"},
    {"[lfs \"customtransfer.x\"]\npath = ./x", "lfs.customtransfer.x.path", "./x", "<none>"},
    {"[foo]\nbar = x", "foo.bar", "x", "<none>"},
    {"[core]\nfsmonitor = true", "core.fsmonitor", "true", "<none>"},
    {"[pull]\ntwohead = evil", "pull.twohead", "evil", "<none>"},
    {"[filter \"lfs\"]\nclean = git-lfs clean -- %f && x", "filter.lfs.clean",
     "git-lfs clean -- %f && x", "filter.lfs.clean"},
    {"[filter \"LFS\"]\nclean = git-lfs clean -- %f", "filter.LFS.clean", "git-lfs clean -- %f",
     "<none>"},
    {"[filter \"lfs\"]\nrequired = maybe", "filter.lfs.required", "maybe", "filter.lfs.required"},
    {"[pack]\nisland = refs/x", "pack.island", "refs/x", "pack.*"},
    {"[lfs]\nurl = ext::sh -c x", "lfs.url", "ext::sh -c x", "lfs.url"},
    {"[maintenance]\nauto = incremental", "maintenance.auto", "incremental", "maintenance.auto"},
    {"[core]\nhooksPath = .githooks", "core.hookspath", ".githooks", "<none>"},
    {"[hook \"lint\"]\ncommand = ./lint", "hook.lint.command", "./lint", "<none>"},
    {"[include]\npath = ../x.cfg", "include.path", "../x.cfg", "<none>"},
    {"[includeIf \"gitdir:~/w/\"]\npath = x", "includeif.gitdir:~/w/.path", "x", "<none>"},
    {"[extensions]\nworktreeConfig = true", "extensions.worktreeconfig", "true", "<none>"},
    {"[core]\nworktree = /home/u", "core.worktree", "/home/u", "<none>"},
    {"[submodule \"m\"]\ngitdir = /tmp/g", "submodule.m.gitdir", "/tmp/g", "<none>"},
    {"[init]\ntemplateDir = /tmp/t", "init.templatedir", "/tmp/t", "<none>"},
    {"[core]\nfsmonitor = touch /tmp/pwned", "core.fsmonitor", "touch /tmp/pwned", "<none>"},
    {"[core]\neditor = vim", "core.editor", "vim", "<none>"},
    {"[sequence]\neditor = x", "sequence.editor", "x", "<none>"},
    {"[core]\npager = less", "core.pager", "less", "<none>"},
    {"[pager]\nlog = sh -c x", "pager.log", "sh -c x", "<none>"},
    {"[alias]\nst = !sh -c x", "alias.st", "!sh -c x", "<none>"},
    {"[alias]\nup = rebase --exec x", "alias.up", "rebase --exec x", "<none>"},
    {"[alias \"hämta\"]\ncommand = fetch", "alias.hämta.command", "fetch", "<none>"},
    {"[core]\nalternateRefsCommand = x", "core.alternaterefscommand", "x", "<none>"},
    {"[gc]\nrecentObjectsHook = x", "gc.recentobjectshook", "x", "<none>"},
    {"[interactive]\ndiffFilter = x", "interactive.difffilter", "x", "<none>"},
    {"[trailer \"s\"]\ncommand = x", "trailer.s.command", "x", "<none>"},
    {"[trailer \"s\"]\ncmd = x", "trailer.s.cmd", "x", "<none>"},
    {"[filter \"lfs\"]\nclean = x", "filter.lfs.clean", "x", "filter.lfs.clean"},
    {"[filter \"lfs\"]\nsmudge = x", "filter.lfs.smudge", "x", "filter.lfs.smudge"},
    {"[filter \"lfs\"]\nprocess = x", "filter.lfs.process", "x", "filter.lfs.process"},
    {"[diff]\nexternal = x", "diff.external", "x", "<none>"},
    {"[diff \"d\"]\ncommand = x", "diff.d.command", "x", "<none>"},
    {"[diff \"d\"]\ntextconv = x", "diff.d.textconv", "x", "<none>"},
    {"[merge \"m\"]\ndriver = x", "merge.m.driver", "x", "<none>"},
    {"[difftool \"t\"]\ncmd = x", "difftool.t.cmd", "x", "<none>"},
    {"[difftool \"meld\"]\npath = x", "difftool.meld.path", "x", "<none>"},
    {"[mergetool \"t\"]\ncmd = x", "mergetool.t.cmd", "x", "<none>"},
    {"[mergetool \"meld\"]\npath = x", "mergetool.meld.path", "x", "<none>"},
    {"[core]\nsshCommand = x", "core.sshcommand", "x", "<none>"},
    {"[core]\ngitProxy = x for example.com", "core.gitproxy", "x for example.com", "<none>"},
    {"[remote \"origin\"]\nuploadpack = x", "remote.origin.uploadpack", "x", "<none>"},
    {"[remote \"origin\"]\nreceivepack = x", "remote.origin.receivepack", "x", "<none>"},
    {"[remote \"origin\"]\nvcs = ext", "remote.origin.vcs", "ext", "<none>"},
    {"[remote \"origin\"]\nurl = ext::sh -c x", "remote.origin.url", "ext::sh -c x",
     "remote.*.url"},
    {"[remote \"origin\"]\npushurl = fd::3", "remote.origin.pushurl", "fd::3", "remote.*.pushurl"},
    {"[submodule \"m\"]\nurl = EXT::x", "submodule.m.url", "EXT::x", "submodule.*.url"},
    {"[url \"ext::sh -c x\"]\ninsteadOf = https://github.com/", "url.ext::sh -c x.insteadof",
     "https://github.com/", "<none>"},
    {"[url \"fd::7\"]\npushInsteadOf = git@", "url.fd::7.pushinsteadof", "git@", "<none>"},
    {"[protocol]\nallow = always", "protocol.allow", "always", "<none>"},
    {"[protocol \"ext\"]\nallow = user", "protocol.ext.allow", "user", "<none>"},
    {"[submodule \"m\"]\nupdate = !x", "submodule.m.update", "!x", "submodule.*.update"},
    {"[uploadpack]\npackObjectsHook = x", "uploadpack.packobjectshook", "x", "<none>"},
    {"[core]\naskPass = x", "core.askpass", "x", "<none>"},
    {"[credential]\nhelper = store", "credential.helper", "store", "<none>"},
    {"[credential \"https://example.com\"]\nhelper = !x", "credential.https://example.com.helper",
     "!x", "<none>"},
    {"[gpg]\nprogram = x", "gpg.program", "x", "<none>"},
    {"[gpg \"x509\"]\nprogram = x", "gpg.x509.program", "x", "<none>"},
    {"[gpg \"ssh\"]\ndefaultKeyCommand = x", "gpg.ssh.defaultkeycommand", "x", "<none>"},
    {"[gpg \"ssh\"]\nallowedSignersFile = x", "gpg.ssh.allowedsignersfile", "x", "<none>"},
    {"[gpg \"ssh\"]\nrevocationFile = x", "gpg.ssh.revocationfile", "x", "<none>"},
    {"[browser \"b\"]\ncmd = x", "browser.b.cmd", "x", "<none>"},
    {"[browser \"firefox\"]\npath = x", "browser.firefox.path", "x", "<none>"},
    {"[man \"m\"]\ncmd = x", "man.m.cmd", "x", "<none>"},
    {"[man \"woman\"]\npath = x", "man.woman.path", "x", "<none>"},
    {"[guitool \"t\"]\ncmd = x", "guitool.t.cmd", "x", "<none>"},
    {"[instaweb]\nhttpd = x", "instaweb.httpd", "x", "<none>"},
    {"[instaweb]\nmodulePath = /tmp/m", "instaweb.modulepath", "/tmp/m", "<none>"},
    {"[tar \"tar.xz\"]\ncommand = x", "tar.tar.xz.command", "x", "<none>"},
    {"[imap]\ntunnel = x", "imap.tunnel", "x", "<none>"},
    {"[sendemail]\nsendmailCmd = x", "sendemail.sendmailcmd", "x", "<none>"},
    {"[sendemail \"work\"]\nsendmailCmd = x", "sendemail.work.sendmailcmd", "x", "<none>"},
    {"[sendemail]\ntoCmd = x", "sendemail.tocmd", "x", "<none>"},
    {"[sendemail]\nccCmd = x", "sendemail.cccmd", "x", "<none>"},
    {"[sendemail]\nheaderCmd = x", "sendemail.headercmd", "x", "<none>"},
    {"[sendemail]\nsmtpServer = /tmp/x", "sendemail.smtpserver", "/tmp/x", "<none>"},
    {"[sendemail \"w\"]\nsmtpServer = ~/x", "sendemail.w.smtpserver", "~/x", "<none>"},
    {"[svn]\nauthorsProg = x", "svn.authorsprog", "x", "<none>"},
    {"[svn-remote \"svn\"]\nauthorsProg = x", "svn-remote.svn.authorsprog", "x", "<none>"},
    {"[http]\ncookieFile = ~/.bashrc", "http.cookiefile", "~/.bashrc", "<none>"},
    {"[http \"https://x/\"]\ncookieFile = y", "http.https://x/.cookiefile", "y", "<none>"},
};

TEST(GitConfigGuard, EveryRefusedKeyIsFound) {
  for (const auto& d : kRefused) {
    SCOPED_TRACE(d.text);
    EXPECT_EQ(findings(d.text), (std::vector<Seen>{{std::string(d.key), std::string(d.value), false,
                                                    1, 1, std::string(d.pattern)}}));
  }
}

/// A text the allowlist accepts whole, and the row patterns it exercises.
struct Allowed {
  std::string_view text;
  std::vector<std::string_view> patterns;
};

// At least one example per row; EveryRowHasAnExample checks that.
const std::vector<Allowed> kAllowed = {
    {"[user]\nname = U\nemail = u@example.com\nsigningKey = ABC", {"user.*"}},
    {"[author]\nname = a\n[committer]\nemail = c", {"author.*", "committer.*"}},
    // git clone writes exactly this.
    {"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
     "\tlogallrefupdates = true\n[remote \"origin\"]\n\turl = https://example.com/r.git\n"
     "\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n"
     "\tmerge = refs/heads/main\n",
     {"core.repositoryFormatVersion", "core.fileMode", "core.bare", "core.logAllRefUpdates",
      "remote.*.url", "remote.*.fetch", "branch.*.remote", "branch.*.merge"}},
    {"[remote \"o\"]\npushurl = git@h:r\npush = refs/heads/a\nmirror = false\ntagOpt = --no-tags\n"
     "prune = true\npruneTags = true\nskipDefaultUpdate = true\nskipFetchAll = true\n"
     "promisor = true\npartialclonefilter = blob:none\n[remote]\npushDefault = o",
     {"remote.*.pushurl", "remote.*.push", "remote.*.mirror", "remote.*.tagOpt", "remote.*.prune",
      "remote.*.pruneTags", "remote.*.skipDefaultUpdate", "remote.*.skipFetchAll",
      "remote.*.promisor", "remote.*.partialclonefilter", "remote.pushDefault"}},
    {"[branch \"b\"]\npushRemote = o\nrebase = true\ndescription = d",
     {"branch.*.pushRemote", "branch.*.rebase", "branch.*.description"}},
    {"[core]\nignorecase = true\nprecomposeunicode = true\nsymlinks = false\nautocrlf = input\n"
     "eol = lf\nsafecrlf = warn\nsparseCheckout = true\nsparseCheckoutCone = true\n"
     "quotepath = off\ncompression = 9\nlooseCompression = 1\nuntrackedCache = keep\n"
     "splitIndex = false\ncheckStat = minimal\ntrustctime = false\npreloadIndex = true\n"
     "commentChar = ;\nabbrev = 12\nmultiPackIndex = true\ncommitGraph = true",
     {"core.ignoreCase",
      "core.precomposeUnicode",
      "core.symlinks",
      "core.autocrlf",
      "core.eol",
      "core.safecrlf",
      "core.sparseCheckout",
      "core.sparseCheckoutCone",
      "core.quotePath",
      "core.compression",
      "core.looseCompression",
      "core.untrackedCache",
      "core.splitIndex",
      "core.checkStat",
      "core.trustctime",
      "core.preloadIndex",
      "core.commentChar",
      "core.abbrev",
      "core.multiPackIndex",
      "core.commitGraph"}},
    {"[extensions]\nobjectFormat = sha256\nrefStorage = files\npartialClone = origin",
     {"extensions.objectFormat", "extensions.refStorage", "extensions.partialClone"}},
    // git submodule add writes this into the superproject's config.
    {"[submodule \"m\"]\n\turl = ../m.git\n\tactive = true\n\tbranch = main\n"
     "\tupdate = rebase\n\tfetchRecurseSubmodules = on-demand\n\tignore = dirty\n"
     "\tshallow = true\n[submodule]\n\tactive = .\n\trecurse = true",
     {"submodule.*.url", "submodule.*.active", "submodule.*.branch", "submodule.*.update",
      "submodule.*.fetchRecurseSubmodules", "submodule.*.ignore", "submodule.*.shallow",
      "submodule.active", "submodule.recurse"}},
    {"[pull]\nrebase = true\nff = only\n[push]\ndefault = simple\nautoSetupRemote = true\n"
     "followTags = true\n[fetch]\nprune = true\npruneTags = false\nrecurseSubmodules = no",
     {"pull.rebase", "pull.ff", "push.default", "push.autoSetupRemote", "push.followTags",
      "fetch.prune", "fetch.pruneTags", "fetch.recurseSubmodules"}},
    {"[merge]\nff = false\nconflictStyle = zdiff3\n[rebase]\nautoStash = true\n"
     "autoSquash = true\nupdateRefs = true\n[init]\ndefaultBranch = main",
     {"merge.ff", "merge.conflictStyle", "rebase.autoStash", "rebase.autoSquash",
      "rebase.updateRefs", "init.defaultBranch"}},
    {"[gc]\nauto = 0\n[index]\nversion = 4\nsparse = true\n[pack]\nwindow = 10\n"
     "packSizeLimit = 2g\nuseBitmaps = true",
     {"gc.auto", "index.*", "pack.*"}},
    // git maintenance register writes this.
    {"[maintenance]\n\tauto = false\n\tstrategy = incremental",
     {"maintenance.auto", "maintenance.strategy"}},
    // git lfs install --local and git lfs push write this.
    {"[lfs]\n\trepositoryformatversion = 0\n\turl = https://example.com/r.git/info/lfs\n"
     "[lfs \"https://example.com/r.git/info/lfs\"]\n\taccess = basic\n\tlocksverify = false\n"
     "[filter \"lfs\"]\n\tprocess = git-lfs filter-process\n\trequired = true\n"
     "\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n",
     {"lfs.repositoryFormatVersion", "lfs.url", "lfs.*.access", "lfs.*.locksVerify",
      "filter.lfs.process", "filter.lfs.required", "filter.lfs.clean", "filter.lfs.smudge"}},
    {"[color]\nui = auto\n[color \"diff\"]\nmeta = blue\n[advice]\ndetachedHead = false",
     {"color.*", "advice.*"}},
    {"", {}},
    {"# core.fsmonitor = x\n; [alias] st = !x", {}},
};

TEST(GitConfigGuard, AllowedTextsHaveNoFindings) {
  for (const auto& a : kAllowed) EXPECT_EQ(findings(a.text), std::vector<Seen>{}) << a.text;
}

TEST(GitConfigGuard, EveryRowHasAnExampleAndAReason) {
  std::set<std::string_view> covered;
  for (const auto& a : kAllowed) covered.insert(a.patterns.begin(), a.patterns.end());
  for (const auto& rule : allowed_git_config_rules()) {
    EXPECT_TRUE(covered.contains(rule.pattern)) << rule.pattern;
    EXPECT_FALSE(rule.reason.empty()) << rule.pattern;
  }
  for (std::string_view pattern : covered)
    EXPECT_TRUE(std::ranges::any_of(allowed_git_config_rules(), [&](const auto& rule) {
      return rule.pattern == pattern;
    })) << pattern;
}

TEST(GitConfigGuard, SectionAndVariableAreCaseInsensitive) {
  EXPECT_EQ(findings("[CORE]\n\tFSMonitor = x\n[Core]\n\tfsMONITOR = y\n[ALIAS]\n\tSt = !z\n"),
            (std::vector<Seen>{{"core.fsmonitor", "x", false, 1, 1, "<none>"},
                               {"core.fsmonitor", "y", false, 3, 3, "<none>"},
                               {"alias.st", "!z", false, 5, 5, "<none>"}}));
}

TEST(GitConfigGuard, SubsectionKeepsItsCaseAndEscapes) {
  EXPECT_EQ(findings("[Remote \"Origin\"]\n\tUploadPack = x"),
            (std::vector<Seen>{{"remote.Origin.uploadpack", "x", false, 1, 1, "<none>"}}));
  // `\"` and `\\` escape; any other `\c` is `c` (get_extended_base_var).
  EXPECT_EQ(findings(R"([filter "a\"b\\c\d"] clean = x)"),
            (std::vector<Seen>{{R"(filter.a"b\cd.clean)", "x", false, 0, 0, "<none>"}}));
  // Spaces between the section and the quoted subsection; a subsection may hold dots.
  EXPECT_EQ(findings("[diff \t \"x.y\"]\ntextconv = t"),
            (std::vector<Seen>{{"diff.x.y.textconv", "t", false, 1, 1, "<none>"}}));
  // A subsection off every row is refused whatever its case.
  EXPECT_EQ(findings("[gpg \"SSH\"]\ndefaultKeyCommand = x"),
            (std::vector<Seen>{{"gpg.SSH.defaultkeycommand", "x", false, 1, 1, "<none>"}}));
}

TEST(GitConfigGuard, DeprecatedDottedSectionLowercasesTheSubsection) {
  EXPECT_EQ(findings("[Filter.LFS]\nProcess = x\n[alias.St]\ncommand = !y"),
            (std::vector<Seen>{{"filter.lfs.process", "x", false, 1, 1, "filter.lfs.process"},
                               {"alias.st.command", "!y", false, 3, 3, "<none>"}}));
  // `[a.b "c"]`: the subsection is "b.c" (parse_config_key splits at the first and last dot).
  EXPECT_EQ(findings("[includeIf.onbranch \"main\"]\npath = z"),
            (std::vector<Seen>{{"includeif.onbranch.main.path", "z", false, 1, 1, "<none>"}}));
}

TEST(GitConfigGuard, ValuesAreUnquotedAndUnescaped) {
  auto value_of = [](std::string_view text) {
    const auto scan = scan_git_config(text);
    EXPECT_FALSE(scan.malformed) << text << ": " << scan.malformed_reason;
    EXPECT_EQ(scan.findings.size(), 1u) << text;
    return scan.findings.empty() ? std::string("<none>") : scan.findings[0].value;
  };
  EXPECT_EQ(value_of("[core]\neditor=vim"), "vim");
  EXPECT_EQ(value_of("[core]\neditor   =   vim  -f   "), "vim  -f");
  EXPECT_EQ(value_of("[core]\neditor = \"  vim  \"  "), "  vim  ");
  EXPECT_EQ(value_of("[core]\neditor = a\"b # c\"d"), "ab # cd");
  EXPECT_EQ(value_of("[core]\neditor = \"a\\\"b\\\\c\\n\\t\\b\""), "a\"b\\c\n\t\b");
  EXPECT_EQ(value_of("[core]\neditor = a\\\"b"), "a\"b");
  EXPECT_EQ(value_of("[core]\neditor = vim # a comment"), "vim");
  EXPECT_EQ(value_of("[core]\neditor = vim ; a comment \\"), "vim");
  EXPECT_EQ(value_of("[core]\neditor = \"vim ; not a comment\""), "vim ; not a comment");
  EXPECT_EQ(value_of("[core]\neditor = a \\\n  b"), "a   b");    // as git: spaces kept
  EXPECT_EQ(value_of("[core]\neditor = \"a \\\n b\""), "a  b");  // continued inside quotes
  EXPECT_EQ(value_of("[core]\neditor = a\\\n"), "a");
  EXPECT_EQ(value_of("[core]\neditor = a\\"), "a");  // a backslash at the end of the text
  EXPECT_EQ(value_of("[core]\neditor = a\tb"), "a\tb");
  // A space before an escaped line end is not trimmed (parse_value resets its trim on `\`).
  EXPECT_EQ(value_of("[core]\neditor = a \\\n# c"), "a ");
  EXPECT_EQ(value_of("[core]\neditor = \"\""), "");
}

TEST(GitConfigGuard, ShellAliasAndUpdateAfterLeadingSpace) {
  EXPECT_EQ(findings("[submodule \"m\"]\nupdate = \"  !x\""),
            (std::vector<Seen>{{"submodule.m.update", "  !x", false, 1, 1, "submodule.*.update"}}));
  EXPECT_EQ(findings("[url \" ext::x\"]\ninsteadOf = y"),
            (std::vector<Seen>{{"url. ext::x.insteadof", "y", false, 1, 1, "<none>"}}));
}

TEST(GitConfigGuard, ImplicitTrue) {
  EXPECT_EQ(findings("[core]\n\thooksPath\n[alias]\n\tx  \t\n"),
            (std::vector<Seen>{{"core.hookspath", "", true, 1, 1, "<none>"},
                               {"alias.x", "", true, 3, 3, "<none>"}}));
  // The implicit true is not a URL, nor the value git lfs install writes.
  EXPECT_EQ(findings("[protocol]\nallow\n[remote \"o\"]\nurl\n[filter \"lfs\"]\nclean"),
            (std::vector<Seen>{{"protocol.allow", "", true, 1, 1, "<none>"},
                               {"remote.o.url", "", true, 3, 3, "remote.*.url"},
                               {"filter.lfs.clean", "", true, 5, 5, "filter.lfs.clean"}}));
  // It is a boolean.
  EXPECT_EQ(findings("[filter \"lfs\"]\nrequired\n[maintenance]\nauto"), std::vector<Seen>{});
}

TEST(GitConfigGuard, HeaderAndEntryOnOneLine) {
  EXPECT_EQ(findings("[core] fsmonitor = x\n[alias]st=!y[z]\n"),
            (std::vector<Seen>{{"core.fsmonitor", "x", false, 0, 0, "<none>"},
                               {"alias.st", "!y[z]", false, 1, 1, "<none>"}}));
}

TEST(GitConfigGuard, LinesCountContinuations) {
  EXPECT_EQ(findings("# c\n[core]\n  editor = a \\\n b \\\n c\n  pager = \"x\\\ny\"\n"),
            (std::vector<Seen>{{"core.editor", "a  b  c", false, 2, 4, "<none>"},
                               {"core.pager", "xy", false, 5, 6, "<none>"}}));
}

TEST(GitConfigGuard, ByteOrderMarkAndCrlf) {
  EXPECT_EQ(findings("\xEF\xBB\xBF[core]\r\n\tsshCommand = ssh -v\r\n\tpager = \"a\\\r\nb\"\r\n"),
            (std::vector<Seen>{{"core.sshcommand", "ssh -v", false, 1, 1, "<none>"},
                               {"core.pager", "ab", false, 2, 3, "<none>"}}));
  // A lone CR is whitespace: trimmed at the end of a value.
  EXPECT_EQ(findings("[core]\reditor = x\r"),
            (std::vector<Seen>{{"core.editor", "x", false, 0, 0, "<none>"}}));
}

TEST(GitConfigGuard, Malformed) {
  struct Case {
    std::string_view text;
    std::string_view reason;
  };
  const std::vector<Case> cases = {
      {"[core\nfsmonitor = x", "line 1: bad section header"},
      {"[]", "line 1: bad section header"},
      {"[core ]", "line 1: bad section header"},
      {"[core \"x]", "line 1: bad section header"},
      {"[core \"x\" ]", "line 1: bad section header"},
      {"[co_re]", "line 1: bad section header"},
      {"[core]\n1x = y", "line 2: bad config line"},
      {"[core]\nx_y = z", "line 2: bad config line"},
      {"[core]\nx y", "line 2: bad config line"},
      {"[core]\n\n  editor = \"x", "line 3: unterminated quoted value"},
      {"[core]\neditor = \"x\ny\"", "line 2: unterminated quoted value"},
      {"[core]\neditor = a\\qb", "line 2: invalid escape sequence in value"},
      {"\xEF\xBB[core]", "line 1: a partial UTF-8 byte order mark"},
      {"\xEF", "line 1: a partial UTF-8 byte order mark"},
      {std::string_view("[core]\neditor = a\0b", 19), "line 2: a NUL byte"},
      {std::string_view("[core]\n# \0", 10), "line 2: a NUL byte"},
      {std::string_view("[co\0re]", 7), "line 1: a NUL byte"},
      {"[core]\n\xC3\xA9 = x", "line 2: bad config line"},
      {"[alias]\n\tx   # a comment needs a value first", "line 2: bad config line"},
      {"[includeIf.gitdir:x \"y\"]\npath = z", "line 1: bad section header"},
  };
  for (const auto& c : cases) {
    const auto scan = scan_git_config(c.text);
    EXPECT_TRUE(scan.malformed) << c.text;
    EXPECT_EQ(scan.malformed_reason, c.reason) << c.text;
  }
}

TEST(GitConfigGuard, MalformedKeepsTheFindingsBeforeTheStop) {
  const auto scan = scan_git_config("[core]\nfsmonitor = x\n[bad\npager = y\n");
  EXPECT_TRUE(scan.malformed);
  EXPECT_EQ(seen(scan), (std::vector<Seen>{{"core.fsmonitor", "x", false, 1, 1, "<none>"}}));
}

TEST(GitConfigGuard, Limits) {
  const std::string long_header = "[alias \"" + std::string(kMaxGitSectionHeaderBytes, 'a') + "\"]";
  EXPECT_EQ(scan_git_config(long_header).malformed_reason, "line 1: section header too long");
  const std::string fits =
      "[alias \"" + std::string(kMaxGitSectionHeaderBytes - 10, 'a') + "\"]\ncommand = !x";
  EXPECT_EQ(scan_git_config(fits).findings.size(), 1u);

  std::string many = "[alias]\n";
  for (std::size_t i = 0; i <= kMaxGitConfigFindings; ++i) many += "a = !x\n";
  const auto scan = scan_git_config(many);
  EXPECT_TRUE(scan.malformed);
  EXPECT_EQ(scan.malformed_reason, "line " + std::to_string(kMaxGitConfigFindings + 2) +
                                       ": too many entries off the allowlist");
  EXPECT_EQ(scan.findings.size(), kMaxGitConfigFindings);
  EXPECT_EQ(without_findings(many, scan.findings), "[alias]\n");
}

TEST(GitConfigGuard, OneMebibyteIsLinear) {
  // 1 MiB of entries under a 4 KiB header, all allowed: git's strbuf discipline (cut the
  // name back to the header) keeps this linear; a copy of the header per entry would not be.
  std::string text = "[color \"" + std::string(4000, 'u') + "\"]\n";
  while (text.size() < (1u << 20)) text += "k\n";
  EXPECT_EQ(findings(text), std::vector<Seen>{});
  // One 1 MiB value, and one 1 MiB comment.
  EXPECT_EQ(scan_git_config("[core]\neditor = " + std::string(1u << 20, 'x')).findings.size(), 1u);
  EXPECT_EQ(findings("# " + std::string(1u << 20, '\\')), std::vector<Seen>{});
}

TEST(GitConfigGuard, AddedNotAllowed) {
  const auto before = scan_git_config(
      "[core]\n\tfsmonitor = a\n[alias]\n\tst = !x\n\tco = checkout\n[remote \"o\"]\n\turl = u\n");
  // Unchanged entries off the allowlist, moved and reformatted, and an allowed change: nothing
  // added.
  const auto same = scan_git_config(
      "[remote \"o\"]\n\turl = v\n[alias]\n\tco = \"checkout\"\n\tst = !x\n[CORE] FSMONITOR=a\n");
  EXPECT_EQ(seen({added_not_allowed(before, same), false, ""}), std::vector<Seen>{});
  // A changed value, a new key, and a true that became implicit.
  const auto changed = scan_git_config(
      "[core]\n\tfsmonitor = b\n[alias]\n\tst = !x\n\tco = checkout\n\tlg = log\n"
      "[include]\n\tpath\n");
  EXPECT_EQ(seen({added_not_allowed(before, changed), false, ""}),
            (std::vector<Seen>{{"core.fsmonitor", "b", false, 1, 1, "<none>"},
                               {"alias.lg", "log", false, 5, 5, "<none>"},
                               {"include.path", "", true, 7, 7, "<none>"}}));
  const auto empty_value = scan_git_config("[include]\n\tpath =\n");
  EXPECT_EQ(added_not_allowed(empty_value, changed).size(), 5u);  // "" is not the implicit true
  // From nothing: everything is added.
  EXPECT_EQ(added_not_allowed(scan_git_config(""), before).size(), 3u);
}

TEST(GitConfigGuard, WithoutFindingsRemovesWholeLines) {
  const std::string text =
      "[core]\n"
      "\tbare = false\n"
      "\tfsmonitor = \"touch x\" # no\n"
      "\tpager = a \\\n"
      "  b\n"
      "\tfilemode = true\n"
      "[alias]\n"
      "\tst = !x\n";
  EXPECT_EQ(without_findings(text, scan_git_config(text).findings),
            "[core]\n"
            "\tbare = false\n"
            "\tfilemode = true\n"
            "[alias]\n");
}

TEST(GitConfigGuard, WithoutFindingsKeepsAHeaderOnTheSameLine) {
  const std::string text = "[alias]\n[core] fsmonitor = evil\nbare = true\n";
  // Removing the whole second line would move `bare = true` into [alias]: only the entry goes.
  EXPECT_EQ(without_findings(text, scan_git_config(text).findings),
            "[alias]\n[core]\nbare = true\n");
  EXPECT_EQ(findings("[alias]\n[core]\nbare = true\n"), std::vector<Seen>{});
  const std::string spaced = "[core]  \t editor = x  # c\n\tbare\n";
  EXPECT_EQ(without_findings(spaced, scan_git_config(spaced).findings), "[core]\n\tbare\n");
}

TEST(GitConfigGuard, WithoutFindingsCrlfBomAndLastLine) {
  const std::string text = "\xEF\xBB\xBF[core]\r\n  editor = x\r\n  bare = true\r\n  pager = p";
  EXPECT_EQ(without_findings(text, scan_git_config(text).findings),
            "\xEF\xBB\xBF[core]\r\n  bare = true\r\n");
  const std::string same_line = "[core]editor=x\r\nbare=true\r\n";
  EXPECT_EQ(without_findings(same_line, scan_git_config(same_line).findings),
            "[core]\r\nbare=true\r\n");
}

TEST(GitConfigGuard, WithoutFindingsRemovesOnlyThoseGiven) {
  const std::string text = "[core]\neditor = a\npager = b\n";
  auto scan = scan_git_config(text);
  ASSERT_EQ(scan.findings.size(), 2u);
  scan.findings.erase(scan.findings.begin());
  EXPECT_EQ(without_findings(text, scan.findings), "[core]\neditor = a\n");
  EXPECT_EQ(without_findings(text, {}), text);
}

TEST(GitConfigGuard, WithoutFindingsOfMalformedKeepsTheWellFormedPart) {
  // Cut at the start of the line where parsing stopped; the entries off the allowlist before it
  // go too.
  const std::string text =
      "[user]\n\tname = u\n[core]\n\teditor = x\n\tbare = false\n[alias] st = \"!y\n[x]\nk=v\n";
  const auto scan = scan_git_config(text);
  ASSERT_TRUE(scan.malformed);
  EXPECT_EQ(scan.malformed_reason, "line 6: unterminated quoted value");
  EXPECT_EQ(without_findings(text, scan.findings), "[user]\n\tname = u\n[core]\n\tbare = false\n");
  // Even when the caller passes no findings.
  EXPECT_EQ(without_findings(text, {}), "[user]\n\tname = u\n[core]\n\tbare = false\n");
  EXPECT_EQ(without_findings("\xEF\xBB", {}), "");
  EXPECT_EQ(without_findings(std::string_view("[core]\nbare = a\0b\n", 17), {}), "[core]\n");
}

TEST(GitConfigGuard, PatternLines) {
  const auto& lines = allowed_git_config_patterns();
  ASSERT_EQ(lines.size(), allowed_git_config_rules().size());
  const std::set<std::string_view> set(lines.begin(), lines.end());
  EXPECT_EQ(set.size(), lines.size());
  for (std::string_view line :
       {"user.*", "remote.*.url (not an ext:: or fd:: URL)",
        "submodule.*.update (not starting with !)", "pack.* (a boolean or a number)",
        "filter.lfs.clean (exactly \"git-lfs clean -- %f\")", "filter.lfs.required (a boolean)"})
    EXPECT_TRUE(set.contains(line)) << line;
}

}  // namespace

// gitmodules(5): what `git submodule add` writes is allowed, as are the other keys git reads
// from .gitmodules; everything else (core.fsmonitor, which git never reads there, a shell-command
// update, an ext:: url, keys the configuration allows such as submodule.<name>.active) is not.
TEST(GitConfigGuard, GitmodulesAllowsOnlyTheSubmoduleKeysGitReadsThere) {
  const std::string added =
      "[submodule \"sub\"]\n"
      "\tpath = sub\n"
      "\turl = ../sub\n"
      "\tbranch = main\n"
      "\tupdate = rebase\n"
      "\tfetchRecurseSubmodules = on-demand\n"
      "\tignore = dirty\n"
      "\tshallow = true\n";
  const auto clean = scan_git_config(added, GitConfigFile::Gitmodules);
  EXPECT_FALSE(clean.malformed);
  EXPECT_EQ(seen(clean), std::vector<Seen>{});
  const std::string hostile =
      "[submodule \"s\"]\n"
      "\tpath = s\n"
      "\tupdate = !touch pwned\n"
      "\turl = ext::sh -c touch% pwned\n"
      "\tactive = true\n"
      "[core] fsmonitor = x\n";
  const auto scan = scan_git_config(hostile, GitConfigFile::Gitmodules);
  EXPECT_EQ(seen(scan),
            (std::vector<Seen>{
                {"submodule.s.update", "!touch pwned", false, 2, 2, "submodule.*.update"},
                {"submodule.s.url", "ext::sh -c touch% pwned", false, 3, 3, "submodule.*.url"},
                {"submodule.s.active", "true", false, 4, 4, "<none>"},
                {"core.fsmonitor", "x", false, 5, 5, "<none>"},
            }));
  EXPECT_EQ(without_findings(hostile, scan.findings, GitConfigFile::Gitmodules),
            "[submodule \"s\"]\n\tpath = s\n[core]\n");
  // The repository's configuration allows submodule.<name>.active, not submodule.<name>.path.
  EXPECT_EQ(seen(scan_git_config("[submodule \"s\"]\n\tactive = true\n")), std::vector<Seen>{});
  EXPECT_EQ(seen(scan_git_config("[submodule \"s\"]\n\tpath = s\n")),
            (std::vector<Seen>{{"submodule.s.path", "s", false, 1, 1, "<none>"}}));
  EXPECT_EQ(allowed_gitmodules_rules().size(), 7u);
}
