/**
 * The listening side the test proxies share (cut-proxy, blackhole-proxy, linger-proxy): a server
 * on a free loopback port whose connections go to the proxy object, made once the port is known.
 */
import { createServer, type Server, type Socket } from 'node:net';

/** Listens on a free loopback port; `make` builds the proxy, `accept` hands it each new connection. */
export async function startProxyServer<P>(
  make: (server: Server, port: number) => P,
  accept: (proxy: P, client: Socket) => void,
): Promise<P> {
  const holder: { proxy?: P } = {};
  const server = createServer((client) => {
    if (holder.proxy) accept(holder.proxy, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  holder.proxy = make(server, typeof address === 'object' && address ? address.port : 0);
  return holder.proxy;
}
