# The README's two commands.  Both install what is missing (Debian 12, as
# root or with sudo), configure and build; `make test` runs every test this
# machine can run, `make demo` runs the demo (DATA=path for your own file).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build test demo bench clean

all: build

deps:
	./tools/install_deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	./testing/demo/run_demo.sh $(BUILD) $(DATA)

bench: build
	./tools/install_deps.sh bench
	mkdir -p $(BUILD)/bench-results
	/usr/bin/python3 benchmarks/run.py benchmarks/sweeps/cpu-peers.toml --build $(BUILD) --out $(BUILD)/bench-results/cpu-peers.jsonl

clean:
	rm -rf $(BUILD) out
