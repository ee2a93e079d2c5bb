/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A server socket as Go's net.Listen and most servers set one up: socket,
 * setsockopt/getsockopt, bind to the loopback address on a port the kernel
 * picks, listen, getsockname. Output, natively and under lard, is the
 * lines printed below; the exit status is 0. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1, got = 0, r;
    socklen_t len = sizeof got, alen;
    struct sockaddr_in a;
    if (s < 0)
        return 1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    printf("setsockopt %d\n", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
    r = getsockopt(s, SOL_SOCKET, SO_REUSEADDR, &got, &len);
    printf("getsockopt %d: reuse %s, length %u\n", r, got ? "on" : "off", len);
    printf("bind %d\n", bind(s, (struct sockaddr *)&a, sizeof a));
    printf("listen %d\n", listen(s, 4));
    alen = sizeof a;
    r = getsockname(s, (struct sockaddr *)&a, &alen);
    printf("getsockname %d: a port %s\n", r, a.sin_port != 0 ? "picked" : "missing");
    close(s);
    return 0;
}
