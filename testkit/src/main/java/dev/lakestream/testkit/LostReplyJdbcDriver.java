package dev.lakestream.testkit;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * A JDBC driver in front of another ({@code jdbc:lost-reply:<the other's URL>}) that loses the
 * replies of an Iceberg JDBC catalog's commits on request: the statement that moves a table's
 * metadata pointer runs on the database, then the connection fails with SQL state 08006 (what
 * PostgreSQL's driver reports for a connection cut by a network reset or a failover) instead of
 * returning its count. The database's state is real; only the reply is lost, as on a network.
 */
public final class LostReplyJdbcDriver implements Driver {

  private static final String PREFIX = "jdbc:lost-reply:";
  private static final Map<String, Schedule> SCHEDULES = new ConcurrentHashMap<>();

  static {
    try {
      DriverManager.registerDriver(new LostReplyJdbcDriver());
    } catch (SQLException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Which commits of one database lose their reply, and how many did. */
  private static final class Schedule {
    final AtomicInteger commits = new AtomicInteger();
    final AtomicInteger lost = new AtomicInteger();
    final AtomicInteger next = new AtomicInteger();
    volatile int every;

    boolean loseThisOne() {
      int n = commits.incrementAndGet();
      boolean lose =
          next.getAndUpdate(k -> Math.max(0, k - 1)) > 0 || (every > 0 && n % every == 0);
      if (lose) {
        lost.incrementAndGet();
      }
      return lose;
    }
  }

  /** The URL that reaches {@code url}'s database through this driver. */
  public static String url(String url) {
    SCHEDULES.computeIfAbsent(url, u -> new Schedule());
    return PREFIX + url;
  }

  /** The next {@code count} commits to {@code url}'s database lose their reply. */
  public static void loseNext(String url, int count) {
    SCHEDULES.computeIfAbsent(url, u -> new Schedule()).next.addAndGet(count);
  }

  /** Every {@code n}-th commit to {@code url}'s database loses its reply from now on (0: none). */
  public static void loseEvery(String url, int n) {
    SCHEDULES.computeIfAbsent(url, u -> new Schedule()).every = n;
  }

  /** How many commits to {@code url}'s database ran there and lost their reply. */
  public static int lost(String url) {
    Schedule schedule = SCHEDULES.get(url);
    return schedule == null ? 0 : schedule.lost.get();
  }

  @Override
  public Connection connect(String url, Properties info) throws SQLException {
    if (!acceptsURL(url)) {
      return null;
    }
    String real = url.substring(PREFIX.length());
    Connection connection = DriverManager.getConnection(real, info);
    Schedule schedule = SCHEDULES.computeIfAbsent(real, u -> new Schedule());
    return proxy(Connection.class, connection, (method, args) -> {
      Object result = method.invoke(connection, args);
      if (method.getName().equals("prepareStatement")
          && args != null
          && args[0] instanceof String sql
          && isPointerMove(sql)) {
        PreparedStatement statement = (PreparedStatement) result;
        return proxy(PreparedStatement.class, statement, (m, a) -> {
          Object count = m.invoke(statement, a);
          if (m.getName().equals("executeUpdate") && schedule.loseThisOne()) {
            connection.close();
            throw new SQLException(
                "lost-reply driver: the connection failed after the update ran", "08006");
          }
          return count;
        });
      }
      return result;
    });
  }

  /** Iceberg's JDBC catalog's commit: the table's pointer moved from the metadata it read. */
  private static boolean isPointerMove(String sql) {
    return sql.startsWith("UPDATE iceberg_tables SET metadata_location");
  }

  private interface Call {
    Object invoke(Method method, Object[] args) throws Throwable;
  }

  private static <T> T proxy(Class<T> type, T target, Call call) {
    InvocationHandler handler = (self, method, args) -> {
      try {
        return call.invoke(method, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    };
    return type.cast(Proxy.newProxyInstance(
        LostReplyJdbcDriver.class.getClassLoader(), new Class<?>[] {type}, handler));
  }

  @Override
  public boolean acceptsURL(String url) {
    return url != null && url.startsWith(PREFIX);
  }

  @Override
  public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
    return new DriverPropertyInfo[0];
  }

  @Override
  public int getMajorVersion() {
    return 1;
  }

  @Override
  public int getMinorVersion() {
    return 0;
  }

  @Override
  public boolean jdbcCompliant() {
    return false;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException();
  }
}
