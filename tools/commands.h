// The attune subcommands; each returns the process exit code.
#pragma once

namespace attune::cli {

int RunCommand(int argc, char** argv);      // attune run
int InspectCommand(int argc, char** argv);  // attune inspect
int BenchCommand(int argc, char** argv);    // attune bench
int GenerateCommand(int argc, char** argv); // attune generate
int ServeCommand(int argc, char** argv);    // attune serve
int TokenizeCommand(int argc, char** argv); // attune tokenize
int QuantizeCommand(int argc, char** argv); // attune quantize

}  // namespace attune::cli
