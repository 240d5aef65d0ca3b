/* laya-rime: Rime (librime) as `laya eval pinyin --peer rime` runs it beside Laya. Reads one
 * toneless pinyin input a line on stdin ("jin tian tian qi", "xi'an") and writes on stdout, a line
 * each, what a user gets by typing it into Rime's luna_pinyin_simp schema (simplified output) and
 * pressing space until nothing is left to convert: the first candidate each time, committed.
 *
 *   laya-rime USER_DATA_DIR [SHARED_DATA_DIR]   (shared default: /usr/share/rime-data)
 *   laya-rime --version
 *
 * USER_DATA_DIR is a folder of its own (scripts/spell-peers.sh uses .deps/peers/rime/user); the
 * first run deploys the schema into it. Spaces in the input become Rime's syllable delimiter "'".
 * Built by scripts/spell-peers.sh against librime-dev. */
#include <rime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA "luna_pinyin_simp"

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    RimeApi *api = rime_get_api();
    printf("librime %s (%s)\n", api->get_version ? api->get_version() : "?", SCHEMA);
    return 0;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: laya-rime USER_DATA_DIR [SHARED_DATA_DIR] < pinyin lines\n");
    return 2;
  }
  RimeApi *api = rime_get_api();
  RIME_STRUCT(RimeTraits, traits);
  traits.shared_data_dir = argc > 2 ? argv[2] : "/usr/share/rime-data";
  traits.user_data_dir = argv[1];
  traits.distribution_name = "Laya";
  traits.distribution_code_name = "laya";
  traits.distribution_version = "1";
  traits.app_name = "rime.laya";
  traits.min_log_level = 3; /* fatal only: logs would go to stderr */
  api->setup(&traits);
  api->initialize(&traits);
  if (api->start_maintenance(True)) api->join_maintenance_thread();
  RimeSessionId session = api->create_session();
  if (!session || !api->select_schema(session, SCHEMA)) {
    fprintf(stderr, "laya-rime: cannot open the schema %s (is rime-data-luna-pinyin installed?)\n", SCHEMA);
    return 1;
  }
  api->set_option(session, "zh_simp", True);
  api->set_option(session, "ascii_mode", False);
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    size_t n = strcspn(line, "\r\n");
    line[n] = 0;
    char keys[4096];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < sizeof keys; i++) {
      char c = line[i];
      if (c == ' ' || c == '\'') {
        if (k > 0 && keys[k - 1] != '\'') keys[k++] = '\'';
      } else if (c >= 'A' && c <= 'Z') {
        keys[k++] = (char)(c - 'A' + 'a');
      } else {
        keys[k++] = c;
      }
    }
    while (k > 0 && keys[k - 1] == '\'') k--;
    keys[k] = 0;
    api->clear_composition(session);
    char out[8192] = "";
    if (k > 0) api->simulate_key_sequence(session, keys);
    /* Space takes the first candidate; what it does not cover stays to be converted. */
    for (int round = 0; round < 64; round++) {
      RIME_STRUCT(RimeStatus, status);
      int composing = api->get_status(session, &status) && status.is_composing;
      api->free_status(&status);
      if (!composing) break;
      api->process_key(session, ' ', 0);
      RIME_STRUCT(RimeCommit, commit);
      if (api->get_commit(session, &commit)) {
        strncat(out, commit.text, sizeof out - strlen(out) - 1);
        api->free_commit(&commit);
      }
    }
    RIME_STRUCT(RimeCommit, commit);
    if (api->get_commit(session, &commit)) {
      strncat(out, commit.text, sizeof out - strlen(out) - 1);
      api->free_commit(&commit);
    }
    printf("%s\n", out);
    fflush(stdout);
  }
  api->destroy_session(session);
  api->finalize();
  return 0;
}
