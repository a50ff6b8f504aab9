package dev.lakestream.common;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256, which every Java has: for store keys and ids that must stay small whatever they name. */
public final class Sha256 {

  private Sha256() {}

  /** The 32-byte SHA-256 digest of {@code bytes}. */
  public static byte[] of(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java has SHA-256", e);
    }
  }
}
