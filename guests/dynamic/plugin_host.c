/* SPDX-License-Identifier: MIT OR Apache-2.0
 * dlopen of a plugin: argv[1] is the plugin's path. Prints what the plugin
 * computes; with argv[2] = "crash", calls a plugin function that writes
 * through a null pointer (the fault message must name the plugin). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: plugin_host PLUGIN [crash]\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        printf("dlopen failed\n");
        return 3;
    }
    int (*answer)(int) = (int (*)(int))dlsym(h, "plugin_answer");
    const char *(*name)(void) = (const char *(*)(void))dlsym(h, "plugin_name");
    if (!answer || !name) {
        printf("dlsym failed\n");
        return 4;
    }
    printf("%s says %d\n", name(), answer(7));
    fflush(stdout);
    if (argc > 2 && strcmp(argv[2], "crash") == 0) {
        void (*crash)(void) = (void (*)(void))dlsym(h, "plugin_crash");
        crash();
    }
    dlclose(h);
    printf("closed\n");
    return 0;
}
