package dev.lakestream.testkit;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback in front of a PostgreSQL server that cuts a client's connection, when
 * asked, right after the server has run and committed an {@code UPDATE}: the server's reply to it
 * (its completion and its ready-for-query) is not forwarded and both sockets are closed. The client
 * sees the I/O error a network reset or a failover gives (PostgreSQL's driver: SQL state 08006)
 * for a statement that took effect: the reply was lost, not the update.
 *
 * <p>The client must not ask for SSL or GSS encryption ({@code sslmode=disable&gssEncMode=disable}
 * in its URL): the proxy reads the server's messages to find the reply.
 */
public final class ReplyCuttingProxy implements AutoCloseable {

  private final ServerSocket server;
  private final int target;
  private final AtomicInteger toCut = new AtomicInteger();
  private final AtomicInteger cut = new AtomicInteger();
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  /** A proxy to the server on loopback port {@code target}. */
  public ReplyCuttingProxy(int target) throws IOException {
    this.target = target;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::accept, "reply-cutting-proxy");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return server.getLocalPort();
  }

  /** The replies of the next {@code count} {@code UPDATE}s that take effect are lost. */
  public void cutNextUpdateReplies(int count) {
    toCut.addAndGet(count);
  }

  /** How many connections were cut after their {@code UPDATE} took effect. */
  public int cut() {
    return cut.get();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
        open.add(client);
        open.add(upstream);
        start(() -> copy(client, upstream), "up");
        start(() -> replies(upstream, client), "down");
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private static void start(Runnable work, String name) {
    Thread thread = new Thread(work, "reply-cutting-proxy-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  private void copy(Socket from, Socket to) {
    try (InputStream in = from.getInputStream()) {
      OutputStream out = to.getOutputStream();
      byte[] buffer = new byte[8192];
      for (int n; (n = in.read(buffer)) >= 0; ) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // a side closed: the other goes too
    } finally {
      close(from, to);
    }
  }

  /**
   * The server's messages (a type byte, a length that counts itself, the body), held until the
   * server is ready for the next query, then forwarded together, or dropped with the connection
   * when they complete an {@code UPDATE} whose reply is to be lost.
   */
  private void replies(Socket from, Socket to) {
    try (DataInputStream in = new DataInputStream(from.getInputStream())) {
      OutputStream out = to.getOutputStream();
      ByteArrayOutputStream held = new ByteArrayOutputStream();
      boolean updated = false;
      while (true) {
        int type = in.read();
        if (type < 0) {
          return;
        }
        int length = in.readInt();
        byte[] body = new byte[length - 4];
        in.readFully(body);
        if (type == 'C' && new String(body, StandardCharsets.US_ASCII).startsWith("UPDATE ")) {
          updated = true;
        }
        held.write(type);
        held.write(length >>> 24);
        held.write(length >>> 16);
        held.write(length >>> 8);
        held.write(length);
        held.write(body);
        if (type == 'Z') {
          // Ready for the next query: the statement's transaction is over (committed).
          if (updated && toCut.getAndUpdate(k -> Math.max(0, k - 1)) > 0) {
            cut.incrementAndGet();
            return; // closed below, the reply unsent
          }
          out.write(held.toByteArray());
          out.flush();
          held.reset();
          updated = false;
        }
      }
    } catch (EOFException e) {
      // the server closed
    } catch (IOException e) {
      // a side closed
    } finally {
      close(from, to);
    }
  }

  private void close(Socket a, Socket b) {
    for (Socket s : new Socket[] {a, b}) {
      try {
        s.close();
      } catch (IOException e) {
        // closing
      }
      open.remove(s);
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : open) {
      s.close();
    }
  }
}
