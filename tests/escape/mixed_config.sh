# shellcheck shell=bash
# tests/escape/mixed_config.sh: a home holding every file of docs/security.md, "Tool
# configuration without its credentials", each with settings and a credential, for the attempts
# that try to read the credentials (sourced after lib.sh).

MIXED_MARKER="mixed-token"

# plant_mixed_config: writes the files in the fake home; each credential holds
# "$MIXED_MARKER-$TAG-<n>".
plant_mixed_config() {
  local t="$MIXED_MARKER-$TAG"
  mkdir -p "$FAKE_HOME/.config/pip" "$FAKE_HOME/.cargo" "$FAKE_HOME/.m2" "$FAKE_HOME/.docker"
  printf 'registry=https://registry.example/\n//registry.example/:_authToken=%s-1\ncafile=/etc/ssl/corp.pem\n' \
    "$t" >"$FAKE_HOME/.npmrc"
  printf 'npmRegistryServer: "https://registry.example"\nnpmAuthToken: %s-2\n' \
    "$t" >"$FAKE_HOME/.yarnrc.yml"
  printf '[global]\nindex-url = https://me:%s-3@pypi.example/simple\n' \
    "$t" >"$FAKE_HOME/.config/pip/pip.conf"
  printf '[registries.corp]\nindex = "sparse+https://cargo.example/index/"\ntoken = "%s-4"\n' \
    "$t" >"$FAKE_HOME/.cargo/config.toml"
  printf '<settings>\n  <servers>\n    <server>\n      <id>corp</id>\n      <password>%s-5</password>\n    </server>\n  </servers>\n</settings>\n' \
    "$t" >"$FAKE_HOME/.m2/settings.xml"
  printf '{\n  "auths": {"registry.example": {"auth": "%s-6"}},\n  "credsStore": "pass"\n}\n' \
    "$t" >"$FAKE_HOME/.docker/config.json"
}

# MIXED_FILES: the planted files, relative to the home (used by the attempts that source this).
# shellcheck disable=SC2034
MIXED_FILES=(.npmrc .yarnrc.yml .config/pip/pip.conf .cargo/config.toml .m2/settings.xml
  .docker/config.json)

# expect_mixed_config_sanitized: the last capture printed the planted files (cat): no credential,
# every setting.
expect_mixed_config_sanitized() {
  refute "$MIXED_MARKER"
  expect_lines 'registry=https://registry.example/' 'cafile=/etc/ssl/corp.pem' \
    'npmRegistryServer: "https://registry.example"' 'index-url = https://pypi.example/simple' \
    'index = "sparse+https://cargo.example/index/"' '      <id>corp</id>' \
    '  "auths": {"registry.example": {"auth": ""}},' '  "credsStore": "pass"'
}
