// stallscope-cli: headless entry point: inspection, analysis, reports and the CI gates.
// The commands live in the registry (command.h, commands.cpp); this file dispatches.
#include "command.h"
#include "record_command.h"

#include <iostream>
#include <string>

using namespace stallscope::cli;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << usageText();
        return 2;
    }
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        std::cout << usageText();
        return 0;
    }
    if (cmd == "--version") {
        std::cout << "stallscope-cli " << STALLSCOPE_VERSION << "\n"
#ifdef STALLSCOPE_HAVE_PDF
                  << "PDF reports: yes\n"
#else
                  << "PDF reports: not built (needs the Qt part: STALLSCOPE_BUILD_APP=ON)\n"
#endif
                  << stallscope::capture::captureFeatureLine() << "\n"
                  << "LibTorch demos (record --demo): "
                  << (stallscope::capture::demoExecutablePath().empty()
                          ? std::string("not built (LibTorch not found)")
                          : stallscope::capture::demoExecutablePath().string())
                  << "\n";
        return 0;
    }
    const Command* command = findCommand(cmd);
    if (!command) {
        std::cerr << "stallscope-cli: unknown command " << cmd << "\n" << usageText();
        return 2;
    }
    if (argc == 3 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h")) {
        std::cout << "usage:\n" << command->usage;
        return 0;
    }
    Args args(std::vector<std::string>(argv + 2, argv + argc));
    return command->main(args, std::cout, std::cerr);
}
