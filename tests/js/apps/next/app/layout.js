// The App Router's root layout: a plain server component; the meter lives in the client page.
export const metadata = { title: 'llm-ux-meter in Next.js' };

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
