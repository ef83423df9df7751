# Makefile - builds sluice-gateway, sluice-worker, the tests and the bench.
#
#   make            build; says which packages are missing, if any
#   make deps       install the packages make check needs (as root)
#   make run        install missing packages, build, run on 127.0.0.1:5050
#   make check      install missing packages, build, run every test, then
#                   the same tests again in an ASan+UBSan build
#   make bench      load and latency benchmark, writes bench/RESULTS.md
#   make bench-store  only its store part: SQLite/PostgreSQL, 1 or 2 gateways
#   make lint       cppcheck
#   make chaos      the chaos suite's long version (tests/chaos/)
#   make valgrind   integration suites with gateway and workers under valgrind
#   O=dir SANITIZER=address,undefined WERROR=1 are honoured everywhere.

O		?= build
PREFIX		?= /usr/local
UNITDIR		?= $(PREFIX)/lib/systemd/system
MANDIR		?= $(PREFIX)/share/man
SANITIZER	?=
WERROR		?= 1
CC		?= cc
VERSION		:= 0.1.0
BUILD_ID	:= $(shell git describe --always --dirty 2>/dev/null || echo unknown)
LLHTTP_DIR	?= /usr/share/llhttp
LLHTTP_INC	?= /usr/share/include/llhttp
ASAN_O		?= build-asan
V		?= 0

# The config.mk rule below comes first in the file; plain 'make' builds.
.DEFAULT_GOAL	:= all

ifeq ($(V),0)
Q		:= @
say		= @printf '  %-7s %s\n' $(1) $(2)
else
Q		:=
say		= @:
endif

WARN	:= -Wall -Wextra -Wformat=2 -Wimplicit-fallthrough \
	   -Wno-unused-parameter -Wshadow -Wpointer-arith -Wcast-qual \
	   -Wmissing-prototypes -Wstrict-prototypes -Wmissing-declarations \
	   -Wsign-compare -Wundef -Wvla
CFLAGS	?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(CFLAGS) $(WARN) -MMD -MP \
	   -DSLUICE_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS)

ifeq ($(WERROR),1)
ALL_CFLAGS += -Werror
endif
ifneq ($(SANITIZER),)
ALL_CFLAGS += -fsanitize=$(SANITIZER) -fno-sanitize-recover=all \
	   -fno-omit-frame-pointer
ALL_LDFLAGS += -fsanitize=$(SANITIZER)
endif

# Package flags come from pkg-config once the packages are there; the
# file is regenerated (after scripts/deps.sh) when missing. Plain 'make'
# only says what is missing; run, check, deps and bench install it (as
# root) or print the command.
NODEPS_GOALS := clean help distclean
ifeq ($(filter $(NODEPS_GOALS),$(MAKECMDGOALS)),)
include $(O)/config.mk
endif
DEPS_ARGS	:= $(if $(filter run check deps bench,$(MAKECMDGOALS)),--install) \
		   $(firstword $(filter check bench,$(MAKECMDGOALS)) \
		   $(if $(filter deps,$(MAKECMDGOALS)),check) build)

$(O)/config.mk: scripts/deps.sh Makefile
	@scripts/deps.sh $(DEPS_ARGS)
	@mkdir -p $(O)
	@msgpack=msgpack; pkg-config --exists msgpack-c && msgpack=msgpack-c; \
	{ echo "PKG_CFLAGS := $$(pkg-config --cflags libevent libcurl \
	    $$msgpack jansson sqlite3 libsystemd check libcrypto libpq)"; \
	  echo "LIBS_GATEWAY := $$(pkg-config --libs libevent \
	    $$msgpack jansson libsystemd libcrypto) -lm"; \
	  echo "LIBS_WORKER := $$(pkg-config --libs libcurl $$msgpack \
	    jansson sqlite3 libcrypto libpq) -lm"; \
	  echo "LIBS_MOCK := $$(pkg-config --libs libevent jansson)"; \
	  echo "LIBS_SQLITE := $$(pkg-config --libs sqlite3)"; \
	  echo "LIBS_CHECK := $$(pkg-config --libs check) \
	    $$(pkg-config --libs libevent libcurl $$msgpack jansson \
	    sqlite3 libcrypto libpq)"; \
	} > $@.tmp && mv $@.tmp $@

# What objects are compiled and binaries linked with, each in a file
# rewritten only when it changes: an edit to the Makefile recompiles
# only what a changed flag affects, and nothing when no flag changed.
# The build id (git describe) reaches only the two files that say it.
FLAGS_NOW	= $(CC) $(ALL_CFLAGS) llhttp:$(LLHTTP_INC)
LINK_NOW	= $(ALL_LDFLAGS) $(LIBS_GATEWAY) $(LIBS_WORKER) $(LIBS_CHECK)
define stamp
	$(shell mkdir -p $(dir $@))$(file > $@.tmp,$(1))
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@
endef
$(O)/cflags: FORCE
	$(call stamp,$(FLAGS_NOW))
$(O)/ldflags: FORCE
	$(call stamp,$(LINK_NOW))
$(O)/buildid: FORCE
	$(call stamp,$(BUILD_ID))
FORCE:

# ---- sources ---------------------------------------------------------

# Explicit lists: a file joins a binary on purpose, not by existing.
# Python's repr(), str() and whitespace; common/jsonw.c writes reals
# with them, so whatever links jsonw.c links these too.
PYFMT_SRCS	:= $(addprefix common/,pyfmt.c pyfmt_float.c pyfmt_uni.c \
		   pystr.c)
COMMON_SRCS	:= $(addprefix common/,base64.c buf.c clock.c conf.c \
		   conf_template.c json.c jsonw.c log.c modelsel.c names.c \
		   nodetypes.c sha256.c textchunk.c tokens.c utf8.c uuid.c \
		   xmem.c liveness.c toolcall.c fernet.c logfile.c paths.c) \
		   $(PYFMT_SRCS)
# a validating JSON scanner without a tree (the gateway's chat bodies)
COMMON_SRCS	+= common/jscan.c
# a PostgreSQL URL without its password (gateway settings, worker store)
COMMON_SRCS	+= common/pgurl.c
PROTO_SRCS	:= $(addprefix proto/,frame.c mpscan.c proto.c)
GATEWAY_SRCS	:= $(addprefix gateway/,api.c api_ollama.c api_openai.c \
		   begtags.c bevwrite.c chan.c confcheck.c confcheck_ep.c confcheck_vars.c \
		   confcheck_wf.c greq.c gwconf.c gwimport.c http.c \
		   confcheck_file.c confcheck_keys.c \
		   http_parse.c main.c metrics.c models.c notify.c pool.c \
		   reload.c resp.c route.c epslots.c gate.c slots.c stats.c \
		   storehealth.c peers.c peerurl.c storeconf.c wenv.c \
		   users.c wflags.c)
# the worker pool's supervisor (gateway/sup_int.h says which calls which)
SUP_SRCS	:= $(addprefix gateway/,sup.c sup_backoff.c sup_frames.c \
		   sup_pool.c sup_queue.c)
GATEWAY_SRCS	+= $(SUP_SRCS)
# what a web page may do here: the Host and Origin rules
GATEWAY_SRCS	+= $(addprefix gateway/,browser.c origin.c)
# Open WebUI's tool-choosing requests (interceptOpenWebUIToolRequests)
GATEWAY_SRCS	+= gateway/owui.c
# chat bodies read without a jansson tree of their messages
GATEWAY_SRCS	+= gateway/api_body.c
# --copy-store: the arguments checked, the worker run (gwimport.c)
GATEWAY_SRCS	+= gateway/gwcopy.c
# the embeddings routes (POST /v1/embeddings, /api/embed, /api/embeddings)
GATEWAY_SRCS	+= $(addprefix gateway/,api_embed.c resp_embed.c)
# The worker, one folder per layer, top first (docs/HACKING.md): each
# uses only the folders below it (scripts/layers.py checks the link).
W_LOOP	:= $(addprefix worker/loop/,wloop.c wloop_store.c slot.c)
W_LOOP	+= worker/loop/keycache.c worker/loop/turn.c
W_ENGINE	:= $(addprefix worker/engine/,flow.c wf.c wf_ts.c routing.c \
		   registry.c)
# the embeddings routes' job (API_OPENAI_EMBED, API_OLLAMA_EMBED)
W_ENGINE	+= worker/engine/embed_job.c
W_NODES	:= $(addprefix worker/nodes/,node_arith.c node_chunker.c \
		   node_concat.c node_cond.c node_files.c node_image.c \
		   node_json.c node_kwsearch.c node_lock.c node_memory.c \
		   node_memwrite.c node_python.c node_standard.c \
		   node_static.c node_sub.c node_summary.c node_tagtext.c \
		   node_unsupported.c node_vecsearch.c node_wiki.c \
		   node_research.c node_webfetch.c)
W_NODES	+= worker/nodes/node_curl.c worker/nodes/node_mcp.c
W_NODES	+= worker/nodes/node_chunks.c worker/nodes/node_rag.c
W_NODES	+= worker/nodes/node_compactor.c
# outside services' clients (nodes/ uses them; they use llm/ and core/)
W_TOOLS	:= $(addprefix worker/tools/,wiki.c research.c xfield.c \
		   netguard.c)
# child processes (PythonModule, CurlCommand, MCP's stdio transport)
W_TOOLS	+= $(addprefix worker/tools/,child.c childrun.c)
W_TOOLS	+= $(addprefix worker/tools/,curlcmd.c curlrun.c)
W_TOOLS	+= $(addprefix worker/tools/,webfetch.c webtext.c htmlstrip.c)
W_TOOLS	+= worker/tools/chunkcur.c
W_TOOLS	+= $(addprefix worker/tools/,mcp.c mcp_conf.c mcp_rpc.c mcp_text.c \
		   mcp_schema.c mcp_stdio.c mcp_http.c mcp_sse.c)
# Jinja2 in a python3 helper; jinja_script.c is made from jinja_helper.py
W_TOOLS	+= $(addprefix worker/tools/,jinja.c jinja_vars.c jinja_script.c)
W_MEMORY	:= $(addprefix worker/memory/,memory.c memgen.c mem_chunk.c \
		   mem_condense.c mem_file.c mem_read.c mem_state.c \
		   mem_text.c mem_vector.c memstore.c vecmem.c vecmem_text.c \
		   kwsearch.c timestamps.c vecembed.c vecmath.c vecbackfill.c)
W_MEMORY	+= $(addprefix worker/memory/,compactor.c compact_conf.c \
		   compact_win.c)
W_LLM	:= $(addprefix worker/llm/,transport.c backend.c callcache.c \
		   failover.c gen_input.c adapter.c output.c adapter_claude.c \
		   adapter_completion.c adapter_kobold.c adapter_ollama.c \
		   adapter_openai.c chat_delta.c sse.c lines.c ask.c ask_node.c \
		   attempt.c \
		   build.c target.c url.c structured.c exchange.c toolforce.c \
		   ep_error.c embed.c \
		   forced.c)
W_IMPORT	:= $(addprefix worker/import/,import.c import_json.c \
		   import_scan.c import_state.c import_util.c import_vec.c \
		   import_crypt.c)
W_IMPORT	+= worker/import/import_compact.c
# --export-wilmer: the import run backwards.
W_IMPORT	+= $(addprefix worker/import/,export.c export_files.c export_vec.c)
# --copy-store: one store into another (SQLite, PostgreSQL), checked.
W_IMPORT	+= worker/import/copystore.c
W_CLEAN	:= $(addprefix worker/clean/,clean.c clean_conf.c clean_match.c \
		   clean_stage.c clean_toks.c \
		   clean_prefix.c clean_pycall.c clean_think.c \
		   clean_toolparse.c clean_tools.c filter.c)
W_STORE	:= $(addprefix worker/store/,store.c store_lock.c store_schema.c \
		   store_stmt.c cache.c)
W_STORE	+= worker/store/store_seal.c
W_STORE	+= worker/store/store_sqlite.c worker/store/store_wait.c
W_STORE	+= $(addprefix worker/store/,store_pg.c store_pgsql.c \
		   store_schema_pg.c store_turn.c)
W_STORE	+= worker/store/store_copy.c
W_CORE	:= $(addprefix worker/core/,msgs.c msgs_edit.c msgs_norm.c \
		   msgs_tooltext.c msgs_liveness.c vars.c \
		   vars_conv.c vars_json.c prompt.c groupchat.c node.c)
W_CORE	+= worker/core/vars_jinja.c
WORKER_SRCS	:= worker/main.c worker/fault.c $(W_LOOP) $(W_ENGINE) \
		   $(W_NODES) $(W_TOOLS) $(W_MEMORY) $(W_LLM) $(W_IMPORT) $(W_CLEAN) \
		   $(W_STORE) $(W_CORE)
LLHTTP_SRCS	:= llhttp.c api.c http.c

obj = $(patsubst %.c,$(O)/%.o,$(1))

COMMON_OBJS	:= $(call obj,$(COMMON_SRCS))
PROTO_OBJS	:= $(call obj,$(PROTO_SRCS))
LLHTTP_OBJS	:= $(patsubst %.c,$(O)/llhttp/%.o,$(LLHTTP_SRCS))
GATEWAY_LIB	:= $(call obj,$(filter-out gateway/main.c,$(GATEWAY_SRCS)))

# One static archive per worker layer, and one each for common/ and
# proto/. Listed top layer first, so one pass of the linker resolves
# them: a binary or a test names the layers it may draw from and gets
# only the objects it uses.
W_LAYERS	:= LOOP ENGINE NODES TOOLS MEMORY LLM IMPORT CLEAN STORE CORE
define ARCHIVE_template
A_$(1)	:= $(O)/$(2)/lib$(notdir $(2)).a
$$(A_$(1)): $$(call obj,$(3))
	$$(call say,AR,$$@)
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach l,$(W_LAYERS),$(eval $(call ARCHIVE_template,$(l),worker/$(shell \
    echo $(l) | tr A-Z a-z),$(W_$(l)))))
$(eval $(call ARCHIVE_template,COMMON,common,$(COMMON_SRCS)))
$(eval $(call ARCHIVE_template,PROTO,proto,$(PROTO_SRCS)))
W_ARCHIVES	:= $(foreach l,$(W_LAYERS),$(A_$(l)))

GATEWAY		:= $(O)/sluice-gateway
WORKER		:= $(O)/sluice-worker
MOCK		:= $(O)/tests/mock-llm
MOCK_WIKI	:= $(O)/tests/mock-wiki
MOCK_RESEARCH	:= $(O)/tests/mock-research
MOCK_WEB	:= $(O)/tests/mock-web
LOADGEN		:= $(O)/bench/loadgen
CLEANBENCH	:= $(O)/bench/cleanbench
JINJABENCH	:= $(O)/bench/jinjabench
PGRUN		:= $(O)/bench/pgrun
RELAYFLOOR	:= $(O)/bench/relayfloor
BINS		:= $(GATEWAY) $(WORKER)

all: $(BINS) $(MOCK) $(MOCK_WIKI) $(MOCK_RESEARCH) $(MOCK_WEB)

$(O)/%.o: %.c $(O)/cflags
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The Jinja2 helper's script, built into the worker as a C string.
$(O)/worker/tools/jinja_script.c: worker/tools/jinja_helper.py
	@mkdir -p $(dir $@)
	$(Q){ echo '/* generated from $< by the Makefile */'; \
	    echo 'extern char jinja_script[];'; \
	    echo 'char jinja_script[] ='; \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' \
	    -e 's/$$/\\n"/' $<; echo ';'; } > $@
$(O)/worker/tools/jinja_script.o: $(O)/worker/tools/jinja_script.c $(O)/cflags
	$(call say,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# llhttp is Node's parser, shipped as C sources by Debian's node-llhttp.
$(O)/llhttp/%.o: $(LLHTTP_DIR)/%.c $(O)/cflags
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) -std=c11 $(CFLAGS) -w -I$(LLHTTP_INC) \
	    $(if $(SANITIZER),-fsanitize=$(SANITIZER) -fno-omit-frame-pointer) \
	    -c -o $@ $<

$(O)/gateway/%.o: ALL_CFLAGS += -I$(LLHTTP_INC)
$(O)/tests/unit/check_http.o: ALL_CFLAGS += -I$(LLHTTP_INC)
BUILD_ID_OBJS	:= $(call obj,gateway/gwconf.c worker/loop/wloop.c)
$(BUILD_ID_OBJS): ALL_CFLAGS += -DSLUICE_BUILD='"$(BUILD_ID)"'
$(BUILD_ID_OBJS): $(O)/buildid

$(GATEWAY): $(call obj,gateway/main.c) $(GATEWAY_LIB) $(A_PROTO) \
	    $(A_COMMON) $(LLHTTP_OBJS) $(O)/ldflags
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(O)/ldflags,$^) \
	    $(LIBS_GATEWAY)

$(WORKER): $(call obj,worker/main.c worker/fault.c) $(W_ARCHIVES) \
	    $(A_PROTO) $(A_COMMON) $(O)/ldflags
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(O)/ldflags,$^) \
	    $(LIBS_WORKER)

# The test doubles: the LLM backend, the offline Wikipedia API and the
# Offline Researcher (tests/mock_*.c).
$(MOCK): $(call obj,tests/mock_llm.c tests/mock_embed.c)
$(MOCK_WIKI): $(call obj,tests/mock_wiki.c)
$(MOCK_RESEARCH): $(call obj,tests/mock_research.c)
$(MOCK_WEB): $(call obj,tests/mock_web.c)
$(MOCK) $(MOCK_WIKI) $(MOCK_RESEARCH) $(MOCK_WEB): $(A_COMMON) $(O)/ldflags
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) \
	    $(LIBS_MOCK)

$(LOADGEN): $(call obj,bench/loadgen.c) $(A_COMMON) $(O)/ldflags
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(O)/ldflags,$^) \
	    $(LIBS_MOCK) -lcurl -lm

$(CLEANBENCH): $(call obj,bench/cleanbench.c) $(A_CLEAN) $(A_COMMON) \
	    $(O)/ldflags
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(O)/ldflags,$^) \
	    $(LIBS_WORKER) -lm

# The paced scenario's floor: the same events through bare processes.
$(RELAYFLOOR): $(call obj,bench/relayfloor.c common/clock.c) $(O)/ldflags
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(O)/ldflags,$^)

# The store scenario's throwaway PostgreSQL cluster (tests/unit/pgtmp.c).
$(PGRUN): $(call obj,bench/pgrun.c tests/unit/pgtmp.c) $(O)/ldflags
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(O)/ldflags,$^) \
	    $(LIBS_WORKER)

# The cost of one render through worker/tools/jinja (bench/RESULTS.md).
$(JINJABENCH): $(call obj,bench/jinjabench.c worker/tools/jinja.c \
	    worker/tools/jinja_script.c worker/tools/child.c) $(A_COMMON) \
	    $(O)/ldflags
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(O)/ldflags,$^) \
	    $(LIBS_WORKER) -lm

# ---- tests -----------------------------------------------------------
# tests/unit/check_<module>.c: one Check suite per module. Each links
# the objects it tests and its stubs (<t>_OBJS), then only the layers
# below that it names (<t>_A: archives, from which the linker takes
# what is used), then proto and common; a hidden dependency on a layer
# it does not name breaks the link. tests/it/: integration suites that
# start the real gateway and workers against tests/mock-llm.
# tests/chaos/: the chaos suite.

UNIT_TESTS	:= check_common check_proto check_sup check_slots check_http \
		   check_sse check_lines check_conf check_api check_gwconf \
		   check_confcheck check_worker check_groupchat check_users \
		   check_store check_memory check_vecmem check_cache \
		   check_pyfmt check_timestamps check_registry check_urls \
		   check_clean check_metrics check_adapters check_nodes \
		   check_vars check_origin check_memgen check_memnodes \
		   check_llmnodes check_transport check_backend check_build \
		   check_ask check_msgs_norm check_fault check_engine \
		   check_loop check_imp check_export check_wiki check_research \
		   check_xfield check_netguard check_structured
UNIT_TESTS	+= check_child check_curl
UNIT_TESTS	+= check_webfetch
UNIT_TESTS	+= check_mcp
UNIT_TESTS	+= check_liveness
UNIT_TESTS	+= check_jinja
UNIT_TESTS	+= check_toolforce
UNIT_TESTS	+= check_fernet
UNIT_TESTS	+= check_logfile
UNIT_TESTS	+= check_logtext
UNIT_TESTS	+= check_compactor
UNIT_TESTS	+= check_seal
UNIT_TESTS	+= check_embed check_vecmath check_vecembed
UNIT_TESTS	+= check_jscan check_chat_delta
IT_TESTS	:= check_it check_it_api check_ops check_limits check_flow \
		   check_wilmer check_dialects check_errors check_usage \
		   check_clients check_store_it check_memory_it \
		   check_vecmem_it check_timestamps_it check_import \
		   check_memory_chaos check_cache_it check_hostile \
		   check_security check_browser check_tools
IT_TESTS	+= check_curlcmd
IT_TESTS	+= check_chunkrag_it
IT_TESTS	+= check_webfetch_it
IT_TESTS	+= check_compactor_it
IT_TESTS	+= check_crypt_it
IT_TESTS	+= check_embed_it
IT_TESTS	+= check_redact_it
IT_TESTS	+= check_pace
IT_TESTS	+= check_haproxy
IT_TESTS	+= check_copystore_it
IT_TESTS	+= check_cluster

u		= $(call obj,$(addprefix tests/unit/,$(1)))
SCRATCHDB	:= $(call u,scratchdb.c pgtmp.c)
HARNESS		:= $(call obj,tests/it/harness.c)
DBQ		:= $(call obj,tests/it/dbq.c)

check_common_OBJS	:= $(COMMON_OBJS)
check_proto_OBJS	:= $(PROTO_OBJS)
check_sup_OBJS		:= $(call obj,$(SUP_SRCS))
check_slots_OBJS	:= $(call obj,gateway/slots.c)
check_http_OBJS		:= $(call obj,gateway/http.c gateway/http_parse.c \
			   gateway/bevwrite.c) \
			   $(LLHTTP_OBJS)
check_sse_OBJS		:= $(call obj,worker/llm/sse.c)
check_lines_OBJS	:= $(call obj,worker/llm/lines.c)
check_conf_OBJS		:=
check_api_OBJS		:= $(call obj,gateway/resp.c gateway/api.c \
			   gateway/api_openai.c gateway/api_ollama.c \
			   gateway/begtags.c gateway/owui.c \
			   gateway/api_embed.c gateway/resp_embed.c)
check_api_OBJS		+= $(call obj,gateway/api_body.c) $(call u,apisame.c)
check_gwconf_OBJS	:= $(call obj,gateway/gwconf.c gateway/origin.c gateway/peerurl.c \
			   gateway/storeconf.c gateway/wenv.c \
			   gateway/wflags.c $(SUP_SRCS)) $(call u,stubs_gwconf.c)
check_worker_OBJS	:= $(call obj,worker/llm/adapter_openai.c \
			   worker/llm/chat_delta.c worker/llm/gen_input.c worker/llm/adapter.c \
			   worker/llm/structured.c) \
			   $(call u,stubs_worker.c)
check_worker_A		:= CORE
check_clean_OBJS	:= $(call obj,$(W_CLEAN))
check_confcheck_OBJS	:= $(call obj,gateway/confcheck.c \
			   gateway/confcheck_ep.c gateway/confcheck_vars.c \
			   gateway/confcheck_wf.c gateway/confcheck_file.c \
			   gateway/confcheck_keys.c)
check_metrics_OBJS	:= $(call obj,gateway/metrics.c)
check_groupchat_OBJS	:= $(call obj,worker/core/groupchat.c)
check_groupchat_A	:= CORE
check_users_OBJS	:= $(call obj,gateway/users.c)
check_adapters_OBJS	:= $(call obj,$(addprefix worker/llm/,adapter.c \
			   adapter_openai.c chat_delta.c adapter_completion.c \
			   adapter_ollama.c adapter_kobold.c adapter_claude.c \
			   gen_input.c structured.c)) $(call u,stubs_worker.c)
check_adapters_A	:= CORE
check_nodes_OBJS	:= $(call obj,worker/engine/registry.c \
			   $(addprefix worker/nodes/,node_unsupported.c \
			   node_static.c node_concat.c node_arith.c node_cond.c \
			   node_json.c node_tagtext.c node_chunker.c \
			   node_files.c node_python.c)) \
			   $(call u,stubs_nodes.c fakerq.c)
check_nodes_A		:= TOOLS CORE
# That every row of common/nodetypes.def meets its real handler: all
# the handlers, and so every layer they use.
check_registry_OBJS	:= $(call obj,worker/engine/registry.c $(W_NODES))
check_registry_A	:= TOOLS MEMORY LLM CLEAN STORE CORE
check_urls_OBJS		:= $(call obj,worker/llm/url.c worker/llm/failover.c)
check_pyfmt_OBJS	:=
check_fernet_OBJS	:=
check_logfile_OBJS	:= $(call u,scratchdir.c)
check_logtext_OBJS	:= $(call u,scratchdir.c)
check_jscan_OBJS	:= $(call obj,tests/jscan_tree.c)
check_chat_delta_OBJS	:= $(call obj,worker/llm/chat_delta.c)
check_vars_OBJS		:= $(call obj,$(addprefix worker/core/,vars.c \
			   vars_conv.c vars_json.c msgs_tooltext.c vars_jinja.c))
check_vars_A		:= CORE
check_store_OBJS	:= $(call obj,$(filter-out worker/store/cache.c, \
			   $(W_STORE))) $(call u,pgtmp.c)
check_cache_OBJS	:= $(call obj,worker/store/cache.c) $(SCRATCHDB)
check_cache_A		:= STORE
check_memory_OBJS	:= $(call obj,$(addprefix worker/memory/,memstore.c \
			   mem_text.c mem_read.c mem_chunk.c)) $(SCRATCHDB)
check_memory_A		:= STORE CORE
check_vecmem_OBJS	:= $(call obj,$(addprefix worker/memory/,vecmem.c \
			   vecmem_text.c kwsearch.c)) $(SCRATCHDB)
check_vecmem_A		:= STORE
check_timestamps_OBJS	:= $(call obj,worker/memory/timestamps.c) $(SCRATCHDB)
check_timestamps_A	:= STORE CORE
# encryptUsingApiKey: sealed rows (store_seal.c) through their writers,
# and the worker's key cache
check_seal_OBJS		:= $(call obj,worker/loop/keycache.c \
			   worker/memory/memstore.c worker/memory/timestamps.c) \
			   $(SCRATCHDB)
check_seal_A		:= STORE CORE
check_origin_OBJS	:= $(call obj,gateway/origin.c)
# Memory writing, the memory nodes, and the nodes that call an LLM, run
# a workflow or take a lock: the LLM call stubbed (stubs_ask.c), the
# request a fake loop and engine with a scratch store (nodectx.c).
NODECTX		:= $(call u,stubs_ask.c nodectx.c fakerq.c scratchdb.c \
		   pgtmp.c) \
		   $(call obj,worker/llm/ask_node.c)
check_memgen_OBJS	:= $(call obj,$(addprefix worker/memory/,memory.c \
			   memgen.c mem_file.c mem_condense.c mem_state.c \
			   mem_vector.c)) $(NODECTX)
check_memgen_A		:= MEMORY LLM CLEAN STORE CORE
check_memnodes_OBJS	:= $(check_memgen_OBJS) $(call obj, \
			   worker/engine/registry.c $(addprefix worker/nodes/, \
			   node_memory.c node_memwrite.c node_summary.c \
			   node_kwsearch.c node_vecsearch.c node_unsupported.c)) \
			   $(call u,stubs_nodes.c)
check_memnodes_A	:= MEMORY LLM CLEAN STORE CORE
check_vecmath_OBJS	:= $(call obj,worker/memory/vecmath.c)
check_vecembed_OBJS	:= $(check_memgen_OBJS) $(call obj, \
			   worker/engine/registry.c $(addprefix worker/nodes/, \
			   node_vecsearch.c node_unsupported.c)) \
			   $(call u,stubs_nodes.c) $(HARNESS)
check_vecembed_A	:= MEMORY LLM CLEAN STORE CORE
check_compactor_OBJS	:= $(call obj,$(addprefix worker/memory/,memory.c \
			   compactor.c compact_conf.c compact_win.c) \
			   worker/nodes/node_compactor.c) $(NODECTX)
check_compactor_A	:= MEMORY LLM CLEAN STORE CORE
check_llmnodes_OBJS	:= $(call obj,worker/engine/registry.c \
			   $(addprefix worker/nodes/,node_standard.c \
			   node_image.c node_sub.c node_lock.c \
			   node_unsupported.c)) $(call u,stubs_nodes.c) $(NODECTX)
check_llmnodes_A	:= MEMORY LLM CLEAN STORE CORE
UNIT_TESTS	+= check_chunkrag
check_chunkrag_OBJS	:= $(call obj,worker/engine/registry.c \
			   worker/nodes/node_chunks.c worker/nodes/node_rag.c \
			   worker/nodes/node_unsupported.c \
			   worker/tools/chunkcur.c) $(call u,stubs_nodes.c) \
			   $(NODECTX)
check_chunkrag_A	:= MEMORY LLM CLEAN STORE CORE
# worker/llm against tests/mock-llm, the request a fake loop
# (nodefix.c: one node of a workflow in a scratch config folder).
check_transport_OBJS	:= $(call obj,worker/llm/transport.c) $(HARNESS)
check_embed_OBJS	:= $(call obj,worker/llm/embed.c worker/llm/ep_error.c \
			   tests/mock_embed.c) $(call u,fakerq.c) $(HARNESS)
check_embed_A		:= LLM CORE
# the embeddings routes' job, with the real client, against mock-llm
UNIT_TESTS	+= check_embedjob
check_embedjob_OBJS	:= $(call obj,worker/engine/embed_job.c \
			   tests/mock_embed.c) $(call u,fakerq.c) $(HARNESS)
check_embedjob_A	:= LLM CORE
check_backend_OBJS	:= $(call obj,$(addprefix worker/llm/,backend.c \
			   output.c callcache.c)) $(call u,fakerq.c) \
			   $(SCRATCHDB) $(HARNESS)
check_backend_A		:= LLM CLEAN STORE CORE
check_build_OBJS	:= $(call obj,worker/llm/build.c worker/llm/target.c \
			   worker/llm/exchange.c) \
			   $(call u,fakerq.c nodefix.c) $(HARNESS)
check_build_A		:= CORE
# The Offline Researcher nodes and client against tests/mock-research.
check_research_OBJS	:= $(call obj,worker/nodes/node_research.c \
			   $(W_TOOLS)) $(call u,fakerq.c nodefix.c) $(HARNESS)
check_research_A	:= LLM CORE
# The shared fields and the address guard of the tools that reach out.
check_xfield_OBJS	:= $(call obj,worker/tools/xfield.c)
check_xfield_A		:= CORE
check_netguard_OBJS	:= $(call obj,worker/tools/netguard.c) $(call u,netnames.c)
check_netguard_A	:= LLM
# Structured output: the block, the schema file, where it lands.
check_structured_OBJS	:= $(call obj,worker/llm/structured.c) \
			   $(call u,scratchdir.c)
check_structured_A	:= CORE
# livenessToolCall on the way in (worker/core/msgs_liveness.c).
check_liveness_OBJS	:= $(call obj,worker/core/msgs_liveness.c)
check_liveness_A	:= CORE
# tool_choice enforced through structured output (worker/llm/toolforce.c).
check_toolforce_OBJS	:= $(call obj,worker/llm/toolforce.c)
check_toolforce_A	:= CORE
check_ask_OBJS		:= $(call obj,$(addprefix worker/llm/,ask.c \
			   ask_node.c attempt.c)) $(check_backend_OBJS) $(call u,nodefix.c)
check_ask_A		:= LLM CLEAN STORE CORE
# The engine with test node handlers (stubs_engine.c), the loop with a
# fake engine (stubs_loop.c) and a fake gateway on its channel
# (fakegw.c), the importer and the fault hooks on scratch folders.
check_msgs_norm_OBJS	:= $(call obj,worker/core/msgs_norm.c)
check_msgs_norm_A	:= CORE
check_fault_OBJS	:= $(call obj,worker/fault.c) \
			   $(call u,fakegw.c scratchdir.c)
check_engine_OBJS	:= $(call obj,$(filter-out %/embed_job.c,$(W_ENGINE)) \
			   worker/nodes/node_unsupported.c worker/llm/ask_node.c) \
			   $(call u,stubs_engine.c stubs_nodes.c fakerq.c \
			   scratchdb.c scratchdir.c pgtmp.c)
check_engine_A		:= TOOLS MEMORY LLM CLEAN STORE CORE
check_loop_OBJS		:= $(call obj,$(W_LOOP)) \
			   $(call u,stubs_loop.c fakegw.c scratchdir.c scratchdb.c \
			   pgtmp.c)
check_loop_A		:= STORE
check_imp_OBJS		:= $(call obj,$(W_IMPORT)) \
			   $(call u,scratchdb.c scratchdir.c pgtmp.c)
check_imp_A		:= STORE
check_export_OBJS	:= $(call obj,$(W_IMPORT)) \
			   $(call u,scratchdb.c scratchdir.c pgtmp.c)
check_export_A		:= STORE
# --copy-store: SQLite -> PostgreSQL -> SQLite on pgtmp's cluster.
UNIT_TESTS	+= check_copystore
check_copystore_OBJS	:= $(call obj,worker/import/copystore.c \
			   worker/store/store_copy.c) $(call u,pgtmp.c scratchdir.c)
check_copystore_A	:= STORE
# The wiki nodes and their client against tests/mock-wiki.
check_wiki_OBJS		:= $(call obj,worker/engine/registry.c \
			   worker/nodes/node_wiki.c worker/tools/wiki.c \
			   worker/nodes/node_unsupported.c) \
			   $(call u,stubs_nodes.c fakerq.c nodefix.c) $(HARNESS)
check_wiki_A		:= LLM CORE
$(O)/tests/unit/check_wiki: | $(MOCK_WIKI)
# Jinja2 (tools/jinja*.c, core/vars_jinja.c) against python3's jinja2.
check_jinja_OBJS	:= $(call obj,$(addprefix worker/tools/,jinja.c \
			   jinja_vars.c jinja_script.c child.c) \
			   worker/memory/mem_text.c)
check_jinja_A		:= CORE
# Child processes: spawning, pipes, the group killed (tools/child.c).
check_child_OBJS	:= $(call obj,worker/tools/child.c \
			   worker/tools/childrun.c)
# CurlCommand: its command line, guards and real curl runs against
# tests/mock-wiki and doubles of the suite's own.
check_curl_OBJS		:= $(call obj,worker/engine/registry.c \
			   worker/nodes/node_curl.c worker/nodes/node_unsupported.c) \
			   $(call u,stubs_nodes.c fakerq.c nodefix.c netnames.c) \
			   $(HARNESS)
check_curl_A		:= TOOLS LLM CORE
$(O)/tests/unit/check_curl: | $(MOCK_WIKI)
$(O)/tests/unit/check_research: | $(MOCK_RESEARCH)
$(O)/tests/it/check_tools: | $(MOCK_RESEARCH) $(MOCK_WIKI)
$(O)/tests/it/check_curlcmd: | $(MOCK_WIKI)
# WebFetch, its client and the address guard against tests/mock-web.
check_webfetch_OBJS	:= $(call obj,worker/engine/registry.c \
			   worker/nodes/node_webfetch.c \
			   worker/nodes/node_unsupported.c) \
			   $(call u,stubs_nodes.c fakerq.c nodefix.c netnames.c) \
			   $(HARNESS)
check_webfetch_A	:= TOOLS LLM CORE
$(O)/tests/unit/check_webfetch: | $(MOCK_WEB)
$(O)/tests/it/check_webfetch_it: | $(MOCK_WEB) $(MOCK) $(BINS)
$(O)/tests/it/check_pace: | $(MOCK)
$(O)/tests/it/check_haproxy: | $(MOCK) $(BINS)
$(O)/tests/it/check_cluster: | $(MOCK) $(BINS)
# MCPToolCall against tests/mcp/fake_server.py (stdio, and as mock-mcp
# over HTTP) and the npm package @modelcontextprotocol/server-everything.
check_mcp_OBJS		:= $(call obj,worker/nodes/node_mcp.c $(W_TOOLS)) \
			   $(call u,fakerq.c nodefix.c) $(HARNESS)
check_mcp_A		:= LLM CORE
MOCK_MCP	:= $(O)/tests/mock-mcp
$(MOCK_MCP): tests/mcp/fake_server.py
	@mkdir -p $(dir $@)
	$(Q)install -m 755 $< $@
$(O)/tests/unit/check_mcp: | $(MOCK_MCP)

$(foreach t,$(IT_TESTS),$(eval $(t)_OBJS := $(HARNESS)))
check_wilmer_OBJS	+= $(DBQ)
check_store_it_OBJS	+= $(DBQ)
check_memory_it_OBJS	+= $(DBQ) $(call u,pgtmp.c)
check_limits_OBJS	+= $(call u,pgtmp.c)
check_cluster_OBJS	+= $(DBQ) $(call u,pgtmp.c) \
			   $(call obj,tests/it/netlab.c tests/it/front.c)
check_haproxy_OBJS	+= $(call obj,tests/it/front.c)
check_vecmem_it_OBJS	+= $(DBQ)
check_timestamps_it_OBJS += $(DBQ)
check_cache_it_OBJS	+= $(DBQ)
check_memory_chaos_OBJS	+= $(DBQ)
check_compactor_it_OBJS	+= $(DBQ)
check_crypt_it_OBJS	+= $(DBQ)
check_embed_it_OBJS	+= $(call obj,tests/mock_embed.c)
# --copy-store through the real binaries, on pgtmp's cluster
check_copystore_it_OBJS	+= $(call u,pgtmp.c)
check_copystore_it_A	:= STORE
$(O)/tests/it/check_copystore_it: | $(BINS)

define TEST_template
$(O)/tests/$(2)/$(1): $(call obj,tests/$(2)/$(1).c) $$($(1)_OBJS) \
	    $$(foreach a,$$($(1)_A),$$(A_$$(a))) $$(A_PROTO) $$(A_COMMON) \
	    $$(O)/ldflags
	@mkdir -p $$(dir $$@)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(ALL_LDFLAGS) -o $$@ $$(filter-out $$(O)/ldflags,$$^) \
	    $$(LIBS_CHECK) -lm
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call TEST_template,$(t),unit)))
$(foreach t,$(IT_TESTS),$(eval $(call TEST_template,$(t),it)))
TEST_BINS	:= $(addprefix $(O)/tests/unit/,$(UNIT_TESTS)) \
		   $(addprefix $(O)/tests/it/,$(IT_TESTS))

# The chaos suite: one binary from tests/chaos/; check-run runs its
# short version, make chaos the long one (CHAOS_FULL=1).
CHAOS_SRCS	:= $(addprefix tests/chaos/,check_chaos.c chaos.c crashloop.c \
		   deadline.c gwkill.c hang.c rogue.c storm.c)
CHAOS_BIN	:= $(O)/tests/chaos/check_chaos
TEST_BINS	+= $(CHAOS_BIN)

$(CHAOS_BIN): $(call obj,$(CHAOS_SRCS)) $(HARNESS) $(A_PROTO) $(A_COMMON) \
	    $(O)/ldflags
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(O)/ldflags,$^) \
	    $(LIBS_CHECK) -lm

# Runs every suite in $(O); the integration suite gets the binaries'
# folder and the shipped WilmerAI configs through the environment.
# After them, the worker's layers are checked (scripts/layers.py): no
# cycle between its folders, no knot of more than 3 files, and no file
# that no unit suite links (check_registry, which links every handler
# to check the node-type table, does not count; main.c is the program).
# Suites that judge latency run after the others, one at a time: beside
# another suite (under ASan, on two cores) a stall of a second can fall
# into their measurement.
SOLO_BINS	:= $(O)/tests/it/check_hostile
SOLO_BINS	+= $(O)/tests/it/check_haproxy
SOLO_BINS	+= $(O)/tests/it/check_cluster
check-run: check-build
	@$(MAKE) -s --no-print-directory -j$(CHECK_JOBS) --output-sync=target \
	    $(addsuffix .run,$(filter-out $(SOLO_BINS),$(TEST_BINS)))
	@$(MAKE) -s --no-print-directory -j1 \
	    $(addsuffix .run,$(filter $(SOLO_BINS),$(TEST_BINS)))
	scripts/layers.py --tests $(O)/tests/unit --skip check_registry \
	    --exempt main $(O)

# Everything make check runs, built in parallel first.
check-build:
	@$(MAKE) -s --no-print-directory -j$(CHECK_JOBS) all $(TEST_BINS)

# One suite, its output kept together (--output-sync) when suites run
# side by side: CHECK_JOBS at a time (default 2; 1 runs them in turn).
CHECK_JOBS	?= 2
%.run: %
	@s=$$(date +%s); echo "== $<"; \
	SLUICE_BUILD=$(abspath $(O)) SLUICE_SRC=$(CURDIR) \
	    CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-60} $< && \
	echo "== $<: $$(($$(date +%s) - s)) s"

# The official client libraries, when Node is around (else the suite
# that uses them says it skipped).
clients-deps:
	@if command -v npm >/dev/null 2>&1; then \
		(cd tests/clients && npm ci --no-audit --no-fund \
		    --loglevel=error >/dev/null) || \
		echo "npm ci failed: the client-library tests will be skipped"; \
	else echo "npm not found: the client-library tests will be skipped"; fi

# libFuzzer harnesses (clang, ASan+UBSan), one per parser, each seeded
# from fuzz/corpus/<name>/: make check runs each for FUZZ_RUNS inputs,
# make fuzz for FUZZ_SECONDS each (fuzz/README.md). Crashes are written
# to $(FUZZ_O)/<name>-crash-<sha1>.
FUZZ_O		:= $(O)/fuzz
FUZZ_NAMES	?= clean frame proto http api backend conf vars jscan
FUZZ_SECONDS	?= 60
FUZZ_RUNS	?= 5000
FUZZ_SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS	= -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
		   -fsanitize=fuzzer-no-link $(FUZZ_SAN) -MMD -MP $(PKG_CFLAGS) \
		   -I$(LLHTTP_INC)
FUZZ_BASE	:= $(addprefix common/,buf.c xmem.c log.c logfile.c paths.c)
FUZZ_JSON	:= $(FUZZ_BASE) $(addprefix common/,uuid.c clock.c json.c \
		   jsonw.c conf.c names.c utf8.c) $(PYFMT_SRCS)
fuzz_clean_SRCS	:= $(W_CLEAN) \
		   $(FUZZ_JSON)
fuzz_frame_SRCS	:= proto/frame.c $(FUZZ_BASE)
fuzz_proto_SRCS	:= $(PROTO_SRCS) $(FUZZ_BASE)
fuzz_http_SRCS	:= gateway/http_parse.c $(FUZZ_BASE) common/uuid.c \
		   common/clock.c
fuzz_api_SRCS	:= $(addprefix gateway/,api.c api_openai.c api_ollama.c \
		   begtags.c) common/base64.c common/modelsel.c $(PROTO_SRCS) \
		   $(FUZZ_JSON)
fuzz_api_SRCS	+= gateway/api_body.c common/jscan.c
fuzz_jscan_SRCS	:= common/jscan.c tests/jscan_tree.c $(FUZZ_BASE)
fuzz_backend_SRCS := $(addprefix worker/llm/,sse.c lines.c adapter_openai.c \
		   chat_delta.c \
		   adapter_completion.c adapter_ollama.c adapter_kobold.c \
		   adapter_claude.c gen_input.c adapter.c structured.c) \
		   worker/core/prompt.c common/jscan.c \
		   worker/core/msgs.c common/base64.c common/conf_template.c \
		   $(PROTO_SRCS) $(FUZZ_JSON)
fuzz_conf_SRCS	:= $(FUZZ_JSON)
fuzz_vars_SRCS	:= worker/core/vars.c worker/core/vars_jinja.c $(FUZZ_BASE) \
		   $(PYFMT_SRCS)
fuzz_http_LL	:= $(patsubst %.c,$(FUZZ_O)/llhttp/%.o,$(LLHTTP_SRCS))
FUZZ_BINS	:= $(foreach n,$(FUZZ_NAMES),$(FUZZ_O)/$(n)_fuzz)

$(FUZZ_O)/cflags: FORCE
	$(call stamp,clang $(FUZZ_CFLAGS))

$(FUZZ_O)/obj/%.o: %.c $(FUZZ_O)/cflags
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$<)
	$(Q)clang $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_O)/llhttp/%.o: $(LLHTTP_DIR)/%.c $(FUZZ_O)/cflags
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$<)
	$(Q)clang -std=c11 -g -O1 -w -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
	    -I$(LLHTTP_INC) -c -o $@ $<

define FUZZ_template
$(FUZZ_O)/$(1)_fuzz: $(patsubst %.c,$(FUZZ_O)/obj/%.o,fuzz/$(1)_fuzz.c \
	    fuzz/common.c $(fuzz_$(1)_SRCS)) $(fuzz_$(1)_LL)
	$$(call say,FUZZ,$$@)
	$$(Q)clang -fsanitize=fuzzer $(FUZZ_SAN) -o $$@ $$^ $$(LIBS_WORKER)
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call FUZZ_template,$(n))))

# $(call fuzz_each,libFuzzer options,corpus folder): every harness on a
# writable corpus folder plus the committed seeds; all of them run, then
# the goal fails if any found something.
fuzz_each = bad=; for n in $(FUZZ_NAMES); do \
	mkdir -p $(2)/$$n; dict=; \
	[ -f fuzz/$$n.dict ] && dict=-dict=fuzz/$$n.dict; \
	$(FUZZ_O)/$${n}_fuzz $$dict -max_len=4096 -timeout=10 \
	    -artifact_prefix=$(FUZZ_O)/$$n- $(1) $(2)/$$n fuzz/corpus/$$n \
	    >$(FUZZ_O)/$$n.log 2>&1 || { tail -40 $(FUZZ_O)/$$n.log; \
	    bad="$$bad $$n"; }; \
	echo "fuzz $$n: $$(grep -E '^\#[0-9]+[[:space:]]+DONE' $(FUZZ_O)/$$n.log | \
	    tail -1 | tr '\t' ' '); $$(tail -1 $(FUZZ_O)/$$n.log)"; \
	done; [ -z "$$bad" ] || { echo "fuzz: findings in:$$bad" \
	    "(see $(FUZZ_O)/<name>.log)"; exit 1; }

fuzz-short: $(FUZZ_BINS)
	@rm -rf $(FUZZ_O)/short
	@$(call fuzz_each,-runs=$(FUZZ_RUNS) -seed=1,$(FUZZ_O)/short)

fuzz: $(FUZZ_BINS)
	@$(call fuzz_each,-max_total_time=$(FUZZ_SECONDS),$(FUZZ_O)/corpus)

-include $(wildcard $(FUZZ_O)/obj/*/*.d)

# What make check needs, installed as root or printed as a command.
deps:
	@scripts/deps.sh --install check

check: $(O)/config.mk deps lint clients-deps
	$(MAKE) --no-print-directory check-run
	$(MAKE) --no-print-directory fuzz-short
	tests/systemd_check.sh $(GATEWAY)
	@if command -v mandoc >/dev/null; then \
		mandoc -T lint -W warning docs/man/*.5 docs/man/*.8; fi
	$(MAKE) --no-print-directory O=$(ASAN_O) SANITIZER=address,undefined \
	    CFLAGS="-O1 -g" check-run

lint: $(O)/config.mk
	cppcheck --quiet --error-exitcode=1 --std=c11 --inline-suppr \
	    --enable=warning,performance,portability \
	    --suppress=missingIncludeSystem --include=scripts/cppcheck.h \
	    -I common -I proto common proto gateway worker tests bench fuzz

run: $(O)/config.mk
	@scripts/deps.sh --install run
	$(MAKE) --no-print-directory all
	$(GATEWAY) --config-dir configs --listen 127.0.0.1:5050

# Sluice beside nginx (the backend) and the Portkey gateway (from
# bench/peers, npm ci; skipped when npm is missing): bench/README.md.
bench: $(O)/config.mk
	@scripts/deps.sh --install bench
	$(MAKE) --no-print-directory all $(LOADGEN) $(CLEANBENCH) $(PGRUN) \
	    $(RELAYFLOOR)
	@(cd bench/peers && npm ci --ignore-scripts --no-audit --no-fund \
	    --loglevel=error >/dev/null) || \
	    echo "npm ci failed in bench/peers: Portkey will be skipped"
	bench/run.sh $(O)

# Only the store scenario of make bench (SQLite against PostgreSQL, one
# gateway against two behind HAProxy): bench/README.md.
bench-store: $(O)/config.mk
	@scripts/deps.sh --install bench
	$(MAKE) --no-print-directory all $(LOADGEN) $(PGRUN)
	BENCH_TARGET=bench-store BENCH_SCENARIOS=store bench/run.sh $(O)

# The chaos suite's long version: about five minutes; figures on the
# lines starting "chaos: " (docs/chaos.md).
chaos: $(O)/config.mk
	$(MAKE) --no-print-directory all $(CHAOS_BIN)
	SLUICE_BUILD=$(abspath $(O)) SLUICE_SRC=$(CURDIR) CHAOS_FULL=1 \
	    $(CHAOS_BIN)

# Integration suites with the gateway and its workers under valgrind
# (tests/valgrind/run.sh); slow, so not part of make check.
VG_TESTS	:= check_it check_it_api check_flow check_memory_it \
		   check_cache_it
valgrind: $(O)/config.mk
	$(MAKE) --no-print-directory all $(addprefix $(O)/tests/it/,$(VG_TESTS))
	tests/valgrind/run.sh $(O) $(VG_TESTS)

# Binaries, units, man pages; the default configuration only where none
# is installed yet (an admin's edits survive a reinstall).
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)/etc/sluice \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8
	install -m 755 $(GATEWAY) $(DESTDIR)$(PREFIX)/bin/sluice-gateway
	install -m 755 $(WORKER) $(DESTDIR)$(PREFIX)/bin/sluice-worker
	cp -rn configs/. $(DESTDIR)/etc/sluice/
	sed 's#/usr/local/bin/#$(PREFIX)/bin/#g' systemd/sluice.service \
	    > $(DESTDIR)$(UNITDIR)/sluice.service
	chmod 644 $(DESTDIR)$(UNITDIR)/sluice.service
	install -m 644 systemd/sluice.socket $(DESTDIR)$(UNITDIR)/
	install -m 644 docs/man/sluice.json.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 docs/man/sluice-gateway.8 $(DESTDIR)$(MANDIR)/man8/

clean:
	rm -rf $(O) $(ASAN_O)

help:
	@sed -n '2,14p' Makefile

.PHONY: all deps check check-run check-build clients-deps lint run bench install clean help \
	bench-store \
	fuzz fuzz-short chaos valgrind

# A link or a compile that fails leaves no half-written target behind
# that a later make would take as up to date.
.DELETE_ON_ERROR:

-include $(shell find $(O) -name '*.d' 2>/dev/null)
