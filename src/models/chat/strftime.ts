/**
 * `strftime` for chat templates' `strftime_now(format)` (Llama 3.x writes today's date with it).
 * Python's C-locale names, local time as `datetime.now()` uses; the date comes from an injected
 * clock so renders are reproducible.
 */

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * Formats `date` with the directives of Python's `strftime` that templates use
 * (`%a %A %b %B %d %e %H %I %j %m %M %p %S %y %Y %%`); others are kept as written.
 * @example strftime(new Date(2024, 6, 26), '%d %b %Y') // '26 Jul 2024'
 */
export function strftime(date: Date, format: string): string {
  return format.replace(/%[aAbBdeHIjmMpSyY%]/g, (directive) => {
    switch (directive) {
      case '%a':
        return DAYS[date.getDay()].slice(0, 3);
      case '%A':
        return DAYS[date.getDay()];
      case '%b':
        return MONTHS[date.getMonth()].slice(0, 3);
      case '%B':
        return MONTHS[date.getMonth()];
      case '%d':
        return pad(date.getDate());
      case '%e':
        return String(date.getDate()).padStart(2, ' ');
      case '%H':
        return pad(date.getHours());
      case '%I':
        return pad(date.getHours() % 12 === 0 ? 12 : date.getHours() % 12);
      case '%j': {
        const day = Date.UTC(date.getFullYear(), date.getMonth(), date.getDate()) - Date.UTC(date.getFullYear(), 0, 1);
        return pad(day / 86_400_000 + 1, 3);
      }
      case '%m':
        return pad(date.getMonth() + 1);
      case '%M':
        return pad(date.getMinutes());
      case '%p':
        return date.getHours() < 12 ? 'AM' : 'PM';
      case '%S':
        return pad(date.getSeconds());
      case '%y':
        return pad(date.getFullYear() % 100);
      case '%Y':
        return String(date.getFullYear());
      default:
        return '%';
    }
  });
}
